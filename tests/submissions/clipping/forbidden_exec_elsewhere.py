# expect: forbidden
# Trick: the entry point is compiled under another file name, with globals of its own, so no
# frame on the stack belongs to this file (the old guard looked for this file's name).
import torch

_SOURCE = """
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return getattr(utils, "clip_grad" + "_norm_")(parameters, max_norm, norm_type)
"""

_scope = {"utils": torch.nn.utils}
exec(compile(_SOURCE, "<elsewhere>", "exec"), _scope)
clip_grad_norm_ = _scope["clip_grad_norm_"]
