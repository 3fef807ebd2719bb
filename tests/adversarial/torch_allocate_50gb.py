# expect: failed
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return torch.ones(50 * 1024**3 // 4).sum()
