# redteam5 (false positive, integrity check): clipping, a CORRECT answer that compiles a helper with
# torch.compile(backend="eager"). The first torch.compile call runs torch's own patcher (torch._dynamo),
# which rebinds library functions (torch.jit.trace, torch.fx Tracer.trace, Module.__init__,
# Module.__setstate__, optimizers' _init_group...) - probed in-process with integrity.baseline():
# torch.compile(f) alone, never called, already gives 5 breaches. Marks then says 'your code replaced
# torch.nn.modules.module.Module.__init__', which the learner's code did not do.
# Observed: marks FORBIDDEN (that message). Practice: FAILED/TIMEOUT here only because compiling is slow
# on this loaded 2-core machine (10 s limit), so this is a false positive in the check's wording and
# rule (a legitimate library feature is called a breach), shown on a machine where compile fits in time.
import torch


@torch.compile(backend="eager", dynamic=True)
def _scale(total, max_norm):
    return torch.clamp(max_norm / (total + 1e-6), max=1.0)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads]), norm_type)
    coef = _scale(total, torch.tensor(float(max_norm)))
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
