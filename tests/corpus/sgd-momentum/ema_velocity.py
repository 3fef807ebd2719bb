# expect: failed pitfall=ema-momentum
# source: momentum written as an exponential moving average, the way Adam's first moment is
import torch


class SGD:
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = list(params)
        self.lr, self.beta, self.wd, self.nesterov = lr, momentum, weight_decay, nesterov
        self.avg = {}

    def zero_grad(self):
        for p in self.params:
            p.grad = None

    def step(self):
        for p in self.params:
            if p.grad is None:
                continue
            with torch.no_grad():
                g = p.grad + self.wd * p
                if self.beta > 0:
                    m = self.avg.get(id(p), torch.zeros_like(p))
                    m = self.beta * m + (1 - self.beta) * g
                    self.avg[id(p)] = m
                    g = g + self.beta * m if self.nesterov else m
                p -= self.lr * g
