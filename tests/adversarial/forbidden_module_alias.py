# expect: forbidden
import torch
clip_grad_norm_ = getattr(torch.nn.utils, "clip_grad" + "_norm_")
