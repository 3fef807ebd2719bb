# redteam5 (false positive, static scan): clipping, a CORRECT answer (the reference's body) with one
# common reproducibility line, torch.backends.cudnn.deterministic = True. The marks scan refuses any
# store to an attribute of a module or of a chain rooted in an import (_rebinds_a_module).
# Expected: PASSED in practice and marks. Observed: practice PASSED, marks FORBIDDEN
# ('changing torch.backends.cudnn.deterministic at line 2'). False positive (documented as by design:
# 'No answer needs to change a module'), but a plausible line in a learner's file.
# Since fixed: a literal setting is not refused (introspection._sets_a_flag); marks PASSED.
import torch
torch.backends.cudnn.deterministic = True  # reproducible runs


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]  # list(): a generator is read once
    norm_type = float(norm_type)
    if not grads:
        return torch.tensor(0.0)
    per_tensor = [torch.linalg.vector_norm(g, norm_type) for g in grads]
    # The norm of the per-tensor norms is the norm of everything concatenated, for any p and inf.
    total = torch.linalg.vector_norm(torch.stack(per_tensor), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
