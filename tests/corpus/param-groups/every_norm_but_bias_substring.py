# expect: failed pitfall=bias-substring
# source: independent mistake: the normalization classes are all there, but biases are found with `"bias" in name` on the qualified name, so a T5-style relative_attention_bias embedding stops decaying
import torch.nn as nn

_NORMS = (nn.modules.batchnorm._NormBase, nn.LayerNorm, nn.GroupNorm, nn.RMSNorm)


def param_groups(model, weight_decay):
    exempt_ids = set()
    for mod in model.modules():
        if isinstance(mod, _NORMS):
            exempt_ids.update(id(p) for p in mod.parameters(recurse=False))
    decay, keep = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if "bias" in name or id(param) in exempt_ids:
            keep.append(param)
        else:
            decay.append(param)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=keep, weight_decay=0.0)]
