# expect: timeout
import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    x = torch.ones(64, 64)
    while True:
        x = torch.tanh(x @ x)
