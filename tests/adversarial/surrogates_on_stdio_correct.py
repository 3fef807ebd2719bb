# expect: passed
# A correct answer that prints text Python holds with lone surrogates, as os.fsdecode gives for a
# file name that is not valid UTF-8 (a checkpoint in a folder named in Latin-1, or a warning
# that quotes such a path). A fresh interpreter writes it escaped (stderr backslashreplaces);
# the warm server's job once opened its stdout and stderr strictly, so the same correct file
# passed cold and failed over the daemon, in watch and in `grind grade` with UnicodeEncodeError.
import os
import sys
import warnings

import torch

checkpoint = os.fsdecode(b"/tmp/caf\xe9/step-100.ckpt")
print("resuming from", checkpoint)
print("loading", checkpoint, file=sys.stderr)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = list(filter(lambda g: g is not None,
                        (t.grad for t in ((parameters,) if torch.is_tensor(parameters) else parameters))))
    if len(grads) == 0:
        return torch.zeros(())
    norm_type = float(norm_type)
    per_tensor = [g.detach().abs().max() if norm_type == float("inf")
                  else torch.linalg.vector_norm(g.detach(), norm_type) for g in grads]
    stacked = torch.stack(per_tensor)
    total = stacked.max() if norm_type == float("inf") else torch.linalg.vector_norm(stacked, norm_type)
    if total > 1e12:
        warnings.warn(f"a huge gradient norm while training from {checkpoint}")
    factor = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(factor.to(g.dtype))
    print("clipped with", checkpoint)
    return total
