# expect: failed pitfall=adam-bias-correction
# source: RMSprop written from memory of Adam: a per-parameter step count and the second moment divided by 1 - alpha^t
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.beta2, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.state = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            st = self.state.setdefault(id(p), {"t": 0, "v": torch.zeros_like(p), "m": torch.zeros_like(p),
                                               "buf": torch.zeros_like(p)})
            st["t"] += 1
            g = p.grad.add(p, alpha=self.wd) if self.wd else p.grad
            st["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            v = st["v"]
            if self.centered:
                st["m"].mul_(self.beta2).add_(g, alpha=1 - self.beta2)
                v = v - st["m"] * st["m"]
            v_hat = v / (1 - self.beta2 ** st["t"])
            d = g / (v_hat.sqrt() + self.eps)
            if self.momentum > 0:
                st["buf"].mul_(self.momentum).add_(d)
                d = st["buf"]
            p.sub_(self.lr * d)
