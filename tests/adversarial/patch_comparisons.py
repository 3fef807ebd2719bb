# expect: failed pitfall=per-tensor
# Monkeypatches every comparison helper it can find, then clips per tensor.
import numpy as np
import torch
import torch.testing

torch.testing.assert_close = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([g.norm(norm_type) for g in grads]), norm_type)
    for g in grads:
        g.mul_(torch.clamp(max_norm / (g.norm(norm_type) + 1e-6), max=1.0))
    return total
