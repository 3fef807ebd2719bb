# expect: failed pitfall=frozen-included
"""Correct ownership rule, but every parameter goes in, frozen or not."""
import torch


def param_groups(model, weight_decay):
    norm_classes = (torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.RMSNorm,
                    torch.nn.modules.batchnorm._NormBase)
    decay, rest, seen = [], [], set()
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            (rest if name == "bias" or isinstance(module, norm_classes) else decay).append(p)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=rest, weight_decay=0.0)]
