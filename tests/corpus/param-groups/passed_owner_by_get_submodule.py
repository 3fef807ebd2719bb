# expect: passed
# source: independent answer: named_parameters() (which lists a tied tensor once), the owner found with model.get_submodule on the part before the last dot, one dict per decay value built with setdefault
from torch import nn

NORM_TYPES = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
              nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def param_groups(model, weight_decay):
    buckets = {}
    for full_name, tensor in model.named_parameters():
        if not tensor.requires_grad:
            continue
        owner_path, _, attr = full_name.rpartition(".")
        owner = model.get_submodule(owner_path) if owner_path else model
        wd = 0.0 if attr == "bias" or isinstance(owner, NORM_TYPES) else weight_decay
        buckets.setdefault(wd, []).append(tensor)
    return [{"params": tensors, "weight_decay": wd} for wd, tensors in buckets.items()]
