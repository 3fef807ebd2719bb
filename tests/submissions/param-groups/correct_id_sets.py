# expect: passed
"""Two passes: first the ids of every exempt tensor, then model.parameters() (which already lists
a tied tensor once). Empty groups are dropped, and the decay value is a Python int when 0."""
from torch import nn


def _is_norm(module):
    return isinstance(module, (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm,
                               nn.modules.batchnorm._BatchNorm, nn.modules.instancenorm._InstanceNorm))


def param_groups(model, weight_decay):
    exempt = set()
    for module in model.modules():
        for key, tensor in module._parameters.items():
            if tensor is not None and (key == "bias" or _is_norm(module)):
                exempt.add(id(tensor))
    trainable = [p for p in model.parameters() if p.requires_grad]
    groups = [
        {"params": tuple(p for p in trainable if id(p) not in exempt), "weight_decay": weight_decay},
        {"params": tuple(p for p in trainable if id(p) in exempt), "weight_decay": 0},
    ]
    return [g for g in groups if g["params"]]
