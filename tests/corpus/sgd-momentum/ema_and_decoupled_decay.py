# expect: failed pitfall=decay-after-momentum+ema-momentum
# source: fastai-style callbacks with average_grad(dampening=True) (an EMA, as fastai uses for Adam) and decoupled weight decay
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.mom, self.wd, self.nesterov = lr, momentum, weight_decay, nesterov
        self.grad_avg = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            p.mul_(1 - self.lr * self.wd)
            if self.mom:
                avg = self.grad_avg.setdefault(p, torch.zeros_like(p))
                avg.mul_(self.mom).add_(p.grad, alpha=1 - self.mom)
                p.sub_(self.lr * (p.grad + self.mom * avg if self.nesterov else avg))
            else:
                p.sub_(self.lr * p.grad)
