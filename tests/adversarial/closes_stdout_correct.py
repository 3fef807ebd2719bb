# expect: passed
# A correct answer whose module closes sys.stdout once it has said what it had to (a script
# habit: nothing more may clutter the output). Its result is written before the runner flushes
# the learner's output, so it must still pass: that last flush raised "I/O operation on closed
# file" and the correct answer crashed, cold and warm alike.
import sys

import torch

print("clip_grad_norm_ loaded; no more output from here")
sys.stdout.close()


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [parameters] if isinstance(parameters, torch.Tensor) else [p for p in parameters]
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(())
    p = float(norm_type)
    norms = torch.stack([g.detach().abs().max() if p == float("inf") else g.detach().norm(p) for g in grads])
    total = norms.max() if p == float("inf") else norms.norm(p)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.to(g.dtype))
    return total
