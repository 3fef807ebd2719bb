# expect: failed
# Attacks warm mode's output files: the job child writes stdout.txt and stderr.txt in its cwd,
# and the parent opens them by name after the job. At import time this replaces both with FIFOs
# nobody will ever write to: a parent that opens them blocks forever. In cold mode (pipes) there
# is nothing to replace. Either way, once the judge comes back, the wrong answer below fails.
import os

for _name in ("stdout.txt", "stderr.txt"):
    try:
        if os.path.lexists(_name):
            os.remove(_name)
        os.mkfifo(_name)
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
