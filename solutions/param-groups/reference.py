"""Reference: AdamW parameter groups chosen by which module owns each parameter."""

from torch import nn

# Modules whose parameters are gains and shifts of a normalized activation. Pulling them toward
# zero fights the normalization itself, so they are exempt from decay, whatever their shape:
# LayerNorm((3, 4)) has a 3x4 gain, and that gain is still a norm parameter.
NORMALIZATION = (
    nn.LayerNorm, nn.GroupNorm, nn.RMSNorm,
    nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
    nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d,
)


def param_groups(model, weight_decay):
    decay, exempt = [], []
    seen = set()  # ids: a tensor shared by two modules (tied weights) is listed only once
    # modules() visits every module once, the model itself first. recurse=False gives only the
    # parameters a module registers itself, so we know who owns each one and under what name.
    for module in model.modules():
        is_norm = isinstance(module, NORMALIZATION)
        for local_name, param in module.named_parameters(recurse=False):
            if id(param) in seen:
                continue
            seen.add(id(param))
            if not param.requires_grad:
                continue  # frozen: the optimizer must not hold it at all
            # The rule is about ownership and the registered name, never about shape:
            # a 1-D learned scale on a custom module is a weight and decays.
            if is_norm or local_name == "bias":
                exempt.append(param)
            else:
                decay.append(param)
    # Both groups carry weight_decay explicitly: a group without the key silently takes the
    # optimizer's default (0.01 for torch.optim.AdamW), which is not "no decay".
    return [
        {"params": decay, "weight_decay": weight_decay},
        {"params": exempt, "weight_decay": 0.0},
    ]
