# expect: forbidden
import functools, torch
clip_grad_norm_ = functools.partial(getattr(torch.nn.utils, "clip_grad_" + "norm_"))
