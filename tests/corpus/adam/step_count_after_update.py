# expect: failed pitfall=step-from-zero
# source: a counter bumped at the end of the loop body, so the bias correction first sees t = 0 (tensor division: inf, then NaN)
import torch


class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled=False):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.wd, self.decoupled = lr, betas, eps, weight_decay, decoupled
        self.exp_avg = {}
        self.exp_avg_sq = {}
        self.steps = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self):
        beta1, beta2 = self.betas
        for p in self.params:
            if p.grad is None:
                continue
            k = id(p)
            if k not in self.steps:
                self.steps[k] = 0
                self.exp_avg[k] = torch.zeros_like(p)
                self.exp_avg_sq[k] = torch.zeros_like(p)
            grad = p.grad
            if self.wd and not self.decoupled:
                grad = grad + self.wd * p
            if self.wd and self.decoupled:
                p.mul_(1 - self.lr * self.wd)
            self.exp_avg[k].mul_(beta1).add_(grad, alpha=1 - beta1)
            self.exp_avg_sq[k].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            t = self.steps[k]
            bc1 = torch.tensor(1 - beta1 ** t, dtype=p.dtype)
            bc2 = torch.tensor(1 - beta2 ** t, dtype=p.dtype)
            p.sub_(self.lr * (self.exp_avg[k] / bc1) / ((self.exp_avg_sq[k] / bc2).sqrt() + self.eps))
            self.steps[k] = t + 1


class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled=True)
