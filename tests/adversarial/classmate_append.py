# expect: failed
# needs: landlock|bubblewrap
# Sabotages classmates (batch grading): appends a line to every other file in the class folder
# this file sits in (and in the student folders next to it) that unbinds their clip_grad_norm_.
# Learners' files are only ever read: where the sandbox keeps the class folder read-only nothing
# changes, and the wrong answer below fails.
import os

_ME = __file__  # the path grind gave this module: the class folder


def _classmates():
    """Every other file in this submission's folder (one NAME.py per student), and the .py files
    in the folders next to it (one NAME/ folder per student)."""
    here = os.path.dirname(_ME)
    parent = os.path.dirname(here)
    found = []
    try:
        found += [os.path.join(here, n) for n in sorted(os.listdir(here))]
    except OSError:
        pass
    try:
        folders = [os.path.join(parent, n) for n in sorted(os.listdir(parent))]
    except OSError:
        folders = []
    for folder in folders:
        if os.path.isdir(folder) and os.path.realpath(folder) != os.path.realpath(here):
            try:
                found += [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if n.endswith(".py")]
            except OSError:
                pass
    mine = os.path.realpath(_ME)
    unique = dict.fromkeys(os.path.realpath(p) for p in found)
    return [p for p in unique if p != mine and os.path.isfile(p)]


for _path in _classmates():
    try:
        with open(_path, "a", encoding="utf-8") as _handle:
            _handle.write("\n\nclip_grad_norm_ = None  # a classmate was here\n")
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
