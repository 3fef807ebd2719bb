"""Oracle for param-groups. torch has no function that builds parameter groups, so there is no
torch implementation to run; this is a second derivation, written independently of the
reference, that the tests hold the reference to on every case:

- it takes the parameters from model.named_parameters() (torch's own de-duplication of tied
  tensors, and its own order) instead of walking modules and remembering ids;
- it finds each parameter's owner by its qualified name (model.get_submodule of the prefix),
  and the registered name as the last component;
- it recognises normalization layers through torch's class hierarchy (_NormBase is the base of
  every BatchNorm and InstanceNorm) instead of listing the classes;
- it returns one group per parameter, so the judge's claim that the number and order of groups
  do not matter is exercised on every case.
"""

from torch import nn
from torch.nn.modules.batchnorm import _NormBase

NORM_BASES = (_NormBase, nn.LayerNorm, nn.GroupNorm, nn.RMSNorm)


def param_groups(model, weight_decay):
    groups = []
    for qualified, param in model.named_parameters():
        if not param.requires_grad:
            continue
        owner_path, _, registered = qualified.rpartition(".")
        owner = model.get_submodule(owner_path)
        exempt = registered == "bias" or isinstance(owner, NORM_BASES)
        groups.append({"params": [param], "weight_decay": 0.0 if exempt else weight_decay})
    return groups
