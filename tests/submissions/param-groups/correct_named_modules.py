# expect: passed
"""Walks named_modules() and each module's own parameters; ties handled with a dict keyed by
id, groups built as generators (AdamW reads each once)."""
import torch.nn as nn

NORM_LAYERS = (
    nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
    nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d,
    nn.LayerNorm, nn.GroupNorm, nn.RMSNorm,
)


def param_groups(model, weight_decay):
    placed = {}  # id -> (param, decays?)
    for _, module in model.named_modules():
        owner_is_norm = isinstance(module, NORM_LAYERS)
        for attr, param in module.named_parameters(recurse=False):
            if id(param) in placed or not param.requires_grad:
                continue
            placed[id(param)] = (param, not (owner_is_norm or attr == "bias"))
    return [
        {"weight_decay": 0.0, "params": (p for p, decays in placed.values() if not decays)},
        {"weight_decay": weight_decay, "params": (p for p, decays in placed.values() if decays)},
    ]
