# expect: failed
# needs: landlock|bubblewrap
# Adds a student (batch grading): writes a correct submission as a new file, and a new student
# folder, into the class folder this file sits in, so that the next grading run (or a careless
# resume) finds a student who never existed. Where the sandbox keeps the class folder read-only
# nothing appears, and the wrong answer below fails.
import os

_HERE = os.path.dirname(os.path.realpath(__file__))  # the path grind gave this module
_GHOST = '''import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads]),
                                     float(norm_type))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.dtype))
    return total
'''
for _path in (os.path.join(_HERE, "ghost_student.py"), os.path.join(_HERE, "ghost_folder", "clipping.py")):
    try:
        os.makedirs(os.path.dirname(_path), exist_ok=True)
        with open(_path, "w", encoding="utf-8") as _handle:
            _handle.write(_GHOST)
    except OSError:
        pass


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    # The attack failed: a plainly wrong answer (right norm, gradients never scaled).
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    return torch.linalg.vector_norm(norms, float(norm_type))
