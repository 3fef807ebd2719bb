# hostile (guards and poison, marks): a fourth review of issue 28. torch's own maths through an optimizer the
# exercise did not name; expected verdict now: forbidden (the manifest names it). Before: PASSED for marks.
import torch


class SGD:
    """torch's RMSprop with alpha=1, eps=1 is heavy-ball SGD: its square average stays 0."""
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mu, self.d, self.wd, self.nesterov = lr, momentum, dampening, weight_decay, nesterov
        self.opts = [torch.optim.RMSprop([p], lr=lr, alpha=1.0, eps=1.0, momentum=momentum,
                                         weight_decay=weight_decay) for p in self.params]
        self.steps = [0] * len(self.params)

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            self.steps[i] += 1
            g_eff = p.grad + self.wd * p if self.wd else p.grad.clone()
            if self.mu and self.steps[i] > 1 and self.d:
                # first step: buf = g; later: buf = mu*buf + (1-d)*g  (weight decay is folded in by RMSprop)
                p.grad = p.grad * (1 - self.d)
                opt = self.opts[i]
                opt.param_groups[0]["weight_decay"] = self.wd * (1 - self.d)
            else:
                self.opts[i].param_groups[0]["weight_decay"] = self.wd
            self.opts[i].step()
            if self.nesterov and self.mu:
                buf = self.opts[i].state[p]["momentum_buffer"]
                # RMSprop applied -lr*buf; nesterov wants -lr*(g + mu*buf)
                p.add_(buf, alpha=self.lr)
                p.sub_(self.lr * (g_eff + self.mu * buf))
