import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    norms = []
    for g in grads:
        n = torch.linalg.vector_norm(g, norm_type)
        g.mul_(torch.clamp(max_norm / (n + 1e-6), max=1.0).to(g.dtype))
        norms.append(n)
    return torch.linalg.vector_norm(torch.stack(norms), norm_type)
