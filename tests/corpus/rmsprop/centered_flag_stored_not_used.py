# expect: failed pitfall=centered-ignored
# source: the centered option accepted and kept (even a mean-gradient buffer updated) but never subtracted under the root
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.state = [dict() for _ in self.params]

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p, st in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad + self.wd * p if self.wd else p.grad
            if not st:
                st.update(sq=torch.zeros_like(p), mean=torch.zeros_like(p), buf=torch.zeros_like(p))
            st["sq"].mul_(self.alpha).add_((1 - self.alpha) * g * g)
            if self.centered:
                st["mean"].mul_(self.alpha).add_((1 - self.alpha) * g)
            denom = st["sq"].sqrt().add(self.eps)
            if self.momentum > 0:
                st["buf"].mul_(self.momentum).addcdiv_(g, denom)
                p.sub_(st["buf"], alpha=self.lr)
            else:
                p.addcdiv_(g, denom, value=-self.lr)
