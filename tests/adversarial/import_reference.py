# expect: error
from solutions.clipping.reference import clip_grad_norm_  # noqa: F401
