# expect: failed pitfall=max-of-norms
# source: independent mistake: the norm of the biggest tensor stands in for the global norm (a reduce with max over the per-tensor norms), written with a generator and a Python max
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    with_grads = [p for p in parameters if p.grad is not None]
    if len(with_grads) == 0:
        return torch.tensor(0.0)
    p = float(norm_type)
    biggest = max((p_.grad.detach().abs().pow(p).sum().pow(1.0 / p) if p != float("inf")
                   else p_.grad.detach().abs().max()) for p_ in with_grads)
    scale = max_norm / (biggest + 1e-6)
    if scale < 1:
        for p_ in with_grads:
            p_.grad.detach().mul_(scale)
    return biggest
