# redteam5 (false positive, static scan): clipping, a CORRECT answer with an assertion message that
# contains the ordinary words 'compile' and 'eval'. _harmless() refuses any string constant (other than a
# docstring) containing a door's name as a word, even in an error message.
# Expected: PASSED in practice and marks. Observed: practice PASSED, marks FORBIDDEN ('the text ...').
# Since fixed: prose may use such words (introspection._harmless); marks PASSED.
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]  # list(): a generator is read once
    norm_type = float(norm_type)
    if not grads:  # nothing to clip
        assert max_norm >= 0, "max_norm must be >= 0 (compile-time constant in eval mode)"
        return torch.tensor(0.0)
    per_tensor = [torch.linalg.vector_norm(g, norm_type) for g in grads]
    # The norm of the per-tensor norms is the norm of everything concatenated, for any p and inf.
    total = torch.linalg.vector_norm(torch.stack(per_tensor), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
