# expect: failed pitfall=decoupled-weight-decay
# source: weight decay written the AdamW way out of habit, p *= 1 - lr * wd before the RMS step, instead of torch's L2 term in the gradient
import torch


class RMSprop:
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = list(params)
        self.lr, self.alpha, self.eps, self.wd = lr, alpha, eps, weight_decay
        self.momentum, self.centered = momentum, centered
        self.avgs = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            if self.wd:
                p.mul_(1 - self.lr * self.wd)
            g = p.grad
            sq, mean, buf = self.avgs.setdefault(p, (torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)))
            sq.mul_(self.alpha).addcmul_(g, g, value=1 - self.alpha)
            if self.centered:
                mean.mul_(self.alpha).add_(g, alpha=1 - self.alpha)
                rms = sq.addcmul(mean, mean, value=-1).sqrt()
            else:
                rms = sq.sqrt()
            step = g / rms.add(self.eps)
            if self.momentum > 0:
                buf.mul_(self.momentum).add_(step)
                step = buf
            p.sub_(step, alpha=self.lr)
