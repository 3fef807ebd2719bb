# expect: failed pitfall=five-norm-classes
# source: independent mistake: norms found through torch's _BatchNorm base plus LayerNorm and GroupNorm; InstanceNorm (an _InstanceNorm, not a _BatchNorm) and RMSNorm are missed
import torch.nn as nn
from torch.nn.modules.batchnorm import _BatchNorm


def param_groups(model, weight_decay):
    norm_ids = set()
    for m in model.modules():
        if isinstance(m, (_BatchNorm, nn.LayerNorm, nn.GroupNorm)):
            norm_ids.update(id(p) for p in m.parameters(recurse=False))
        elif getattr(m, "bias", None) is not None and isinstance(m.bias, nn.Parameter):
            norm_ids.add(id(m.bias))
    keep = [p for p in model.parameters() if p.requires_grad]
    return [
        {"params": [p for p in keep if id(p) in norm_ids], "weight_decay": 0.0},
        {"params": [p for p in keep if id(p) not in norm_ids], "weight_decay": weight_decay},
    ]
