# expect: failed pitfall=transformers-decay-names
# source: look-alike of transformers 4.x Trainer.get_decay_parameter_names: names outside nn.LayerNorm (ALL_LAYERNORM_LAYERS), minus names containing "bias"; groups by name and requires_grad (written for this corpus)
from torch import nn

LAYERNORM_TYPES = (nn.LayerNorm,)


def _names_outside(module, banned):
    names = []
    for child_name, child in module.named_children():
        if isinstance(child, banned):
            continue
        names += [f"{child_name}.{n}" for n in _names_outside(child, banned)]
    names += list(module._parameters)
    return names


def param_groups(model, weight_decay):
    decayed = {n for n in _names_outside(model, LAYERNORM_TYPES) if "bias" not in n}
    named = list(model.named_parameters())
    return [
        {"params": [p for n, p in named if n in decayed and p.requires_grad], "weight_decay": weight_decay},
        {"params": [p for n, p in named if n not in decayed and p.requires_grad], "weight_decay": 0.0},
    ]
