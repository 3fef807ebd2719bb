# expect: passed
# Not a trick: a correct answer that checks its own arithmetic with torch.testing.assert_allclose.
# That function is a typing_extensions.deprecated wrapper whose code object torch shares with 52
# other callables, torch.nn.utils.clip_grad_norm (forbidden) among them: no false accusation.
import math

import torch


def _flat(grads, p):
    if p == math.inf:
        return max(float(g.abs().max()) for g in grads)
    return sum(float(g.double().abs().pow(p).sum()) for g in grads) ** (1.0 / p)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = (parameters,)
    grads = [q.grad for q in parameters if q.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    p = float(norm_type)
    if p == math.inf:
        total = torch.stack([g.detach().abs().max() for g in grads]).max()
    else:
        total = torch.stack([g.detach().abs().pow(p).sum() for g in grads]).sum().pow(1.0 / p)
    torch.testing.assert_allclose(total.double(), torch.tensor(_flat(grads, p), dtype=torch.float64),
                                  rtol=1e-3, atol=1e-6)
    scale = min(1.0, max_norm / (float(total) + 1e-6))
    if scale < 1.0:
        for g in grads:
            g.mul_(scale)
    return total
