# expect: failed pitfall=l2-only
# source: look-alike of fairseq.utils.clip_grad_norm_(params, max_norm): always the 2-norm (it has no norm_type), clipped by max_norm / (total + 1e-6) capped at 1
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # fairseq's signature has no norm_type: the argument is accepted and ignored
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad.detach() for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    if len(grads) == 1:
        total_norm = torch.norm(grads[0], p=2)
    else:
        total_norm = torch.norm(torch.stack([torch.norm(g, p=2) for g in grads]))
    if max_norm > 0:
        clip_coef = (float(max_norm) / (total_norm + 1e-6)).clamp_(max=1)
        for g in grads:
            g.mul_(clip_coef)
    return total_norm
