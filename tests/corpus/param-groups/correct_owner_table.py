# expect: passed
# source: independent answer: a table from tensor id to every (module, attribute) that registers it, built with named_modules(remove_duplicate=False); exempt when any owner says so
from collections import defaultdict

from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
         nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def param_groups(model, weight_decay):
    owners = defaultdict(list)
    for _, module in model.named_modules(remove_duplicate=False):
        for attr, p in module.named_parameters(recurse=False):
            owners[id(p)].append((module, attr))
    decay, exempt = [], []
    for p in model.parameters():
        if not p.requires_grad:
            continue
        if any(attr == "bias" or isinstance(m, NORMS) for m, attr in owners[id(p)]):
            exempt.append(p)
        else:
            decay.append(p)
    return [{"params": exempt, "weight_decay": 0.0}, {"params": decay, "weight_decay": float(weight_decay)}]
