# expect: passed
"""One group per parameter, in reverse order, found by qualified name: the judge must not care
how many groups there are or in which order."""
from torch import nn

NORMALIZATION = ("LayerNorm", "GroupNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
                 "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")


def param_groups(model, weight_decay):
    norm_types = tuple(getattr(nn, name) for name in NORMALIZATION)
    groups = []
    for qualified, param in reversed(list(model.named_parameters())):
        if not param.requires_grad:
            continue
        path, _, leaf = qualified.rpartition(".")
        owner = model.get_submodule(path) if path else model
        decay = 0.0 if leaf == "bias" or isinstance(owner, norm_types) else weight_decay
        groups.append({"params": [param], "weight_decay": decay})
    return groups
