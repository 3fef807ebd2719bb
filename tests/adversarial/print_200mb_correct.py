# expect: passed
# A correct answer that prints 200 MB while it loads. Output is capped in what grind shows, never
# in what the submission may write: cold mode (pipes) and warm mode (files, under the file-size
# limit) must both pass it, with a truncation notice, not crash with "File too large".
import sys

_line = "x" * ((1 << 20) - 1) + "\n"
for _ in range(200):
    sys.stdout.write(_line)
sys.stdout.flush()


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    total = torch.linalg.vector_norm(norms, float(norm_type))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
