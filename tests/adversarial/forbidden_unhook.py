# expect: forbidden
# Removes the profile hook first, then calls the real function from a closure cell.
import sys, torch
sys.setprofile(None)
g = getattr(torch.nn.utils, "clip_grad_" + "norm_")
orig = next(c.cell_contents for c in g.__closure__ if callable(c.cell_contents) and getattr(c.cell_contents, "__name__", "") == "clip_grad_norm_")
def clip_grad_norm_(p, m, n=2.0):
    return orig(p, m, n)
