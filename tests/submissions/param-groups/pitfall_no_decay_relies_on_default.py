# expect: failed pitfall=exempt-group-without-key
"""The exempt group leaves weight_decay out, thinking that means none."""
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
         nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def param_groups(model, weight_decay):
    skip = {id(p) for m in model.modules() for n, p in m.named_parameters(recurse=False)
            if n == "bias" or isinstance(m, NORMS)}
    params = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if id(p) not in skip], "weight_decay": weight_decay},
        {"params": [p for p in params if id(p) in skip]},
    ]
