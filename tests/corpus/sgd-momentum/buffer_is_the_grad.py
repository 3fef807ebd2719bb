# expect: failed pitfall=buffer-aliases-grad
# source: first velocity stored as the gradient tensor itself (d_p, no clone), then updated in place
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            d_p = p.grad
            if self.weight_decay:
                d_p = d_p.add(p, alpha=self.weight_decay)
            if self.momentum:
                if "momentum_buffer" not in self.state.setdefault(p, {}):
                    buf = self.state[p]["momentum_buffer"] = d_p
                else:
                    buf = self.state[p]["momentum_buffer"]
                    buf.mul_(self.momentum).add_(d_p, alpha=1 - self.dampening)
                d_p = d_p.add(buf, alpha=self.momentum) if self.nesterov else buf
            p.add_(d_p, alpha=-self.lr)
