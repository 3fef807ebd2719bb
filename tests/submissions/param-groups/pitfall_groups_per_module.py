# expect: failed pitfall=tied-listed-twice
"""A group per module and kind: correct, except that a tied weight lands in two groups, which
AdamW refuses with a ValueError."""
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
         nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def param_groups(model, weight_decay):
    groups = []
    for module in model.modules():
        own = [(n, p) for n, p in module.named_parameters(recurse=False) if p.requires_grad]
        if not own:
            continue
        if isinstance(module, NORMS):
            groups.append({"params": [p for _, p in own], "weight_decay": 0.0})
            continue
        weights = [p for n, p in own if n != "bias"]
        biases = [p for n, p in own if n == "bias"]
        if weights:
            groups.append({"params": weights, "weight_decay": weight_decay})
        if biases:
            groups.append({"params": biases, "weight_decay": 0.0})
    return groups
