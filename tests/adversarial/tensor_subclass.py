# expect: failed
# A tensor subclass whose __torch_function__ makes every comparison come out equal.
import torch


class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.allclose, torch.equal, torch.Tensor.__eq__, torch.isclose):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    total = torch.linalg.vector_norm(torch.stack([g.norm(norm_type) for g in grads]), norm_type)
    for g in grads:
        g.mul_(min(1.0, float(max_norm / (total + 1e-6))))
    return torch.zeros(()).as_subclass(Liar)
