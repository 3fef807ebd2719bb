# expect: failed pitfall=per-tensor
# source: independent mistake: a Clipper class whose loop scales each tensor by its own norm (the global total is still returned)
import torch


class Clipper:
    def __init__(self, max_norm, p):
        self.max_norm = max_norm
        self.p = float(p)

    def norm(self, t):
        return torch.linalg.vector_norm(t, self.p)

    def __call__(self, grads):
        norms = [self.norm(g) for g in grads]
        total = self.norm(torch.stack(norms))
        for g, n in zip(grads, norms):
            g.mul_(torch.clamp(self.max_norm / (n + 1e-6), max=1.0))
        return total


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else parameters
    grads = [p.grad for p in params if p.grad is not None]
    return Clipper(max_norm, norm_type)(grads)
