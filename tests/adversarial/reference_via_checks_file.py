# expect: failed|error
# needs: landlock|bubblewrap
# Reads the reference without importing it: the checks module the runner loaded is in
# sys.modules["grind_checks"], and its __file__ names solutions/clipping/checks.py, right next
# to reference.py, which this file then executes and delegates to. Where the sandbox hides the
# solutions there is nothing to read, and the wrong answer below fails.
import os
import sys

_reference = None
try:
    _folder = os.path.dirname(sys.modules["grind_checks"].__file__)
    _path = os.path.join(_folder, "reference.py")
    with open(_path, encoding="utf-8") as _handle:
        _namespace = {"__name__": "stolen_reference"}
        exec(compile(_handle.read(), _path, "exec"), _namespace)
    _reference = _namespace["clip_grad_norm_"]
except (KeyError, AttributeError, TypeError, OSError, SyntaxError, ImportError):
    _reference = None


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    if _reference is not None:
        return _reference(parameters, max_norm, norm_type)
    # The attack failed: a plainly wrong answer (right norm, gradients never scaled).
    import torch

    if isinstance(parameters, torch.Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch.stack([torch.linalg.vector_norm(g, float(norm_type)) for g in grads])
    return torch.linalg.vector_norm(norms, float(norm_type))
