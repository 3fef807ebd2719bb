# expect: forbidden
# Digs the real function out of the guard's closure and calls it from the learner's code.
import torch
g = getattr(torch.nn.utils, "clip_grad_" + "norm_")
orig = next(c.cell_contents for c in g.__closure__ if callable(c.cell_contents) and c.cell_contents is not g and getattr(c.cell_contents, "__name__", "") == "clip_grad_norm_")
def clip_grad_norm_(p, m, n=2.0):
    return orig(p, m, n)
