# expect: passed
# source: independent answer: a small accumulator class summing |g|^p tensor by tensor, coefficient via torch.where
import math

import torch


class _PNorm:
    def __init__(self, p):
        self.p = float(p)
        self.acc = None

    def add(self, g):
        g = g.detach().abs().double()
        part = g.max() if math.isinf(self.p) else g.pow(self.p).sum()
        if self.acc is None:
            self.acc = part
        elif math.isinf(self.p):
            self.acc = torch.maximum(self.acc, part)
        else:
            self.acc = self.acc + part

    def value(self):
        if self.acc is None:
            return torch.tensor(0.0, dtype=torch.float64)
        return self.acc if math.isinf(self.p) else self.acc ** (1.0 / self.p)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    norm = _PNorm(norm_type)
    for p in params:
        if p.grad is not None:
            norm.add(p.grad)
    total = norm.value()
    coef = torch.where(total > max_norm, max_norm / (total + 1e-6), torch.ones_like(total))
    for p in params:
        if p.grad is not None:
            p.grad.copy_(p.grad * coef.to(p.grad.dtype))
    return total
