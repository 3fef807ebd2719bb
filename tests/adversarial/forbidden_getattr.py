# expect: forbidden
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    builtin = getattr(torch.nn.utils, "clip_grad" + "_norm_")
    return builtin(parameters, max_norm, norm_type)
