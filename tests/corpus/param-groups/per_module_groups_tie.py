# expect: failed pitfall=tied-listed-twice
# source: independent mistake: each module's own parameters become their own group (a layer-wise setup), so the tensor shared by the embedding and the head is in two groups and AdamW raises
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase)


def param_groups(model, weight_decay):
    out = []
    for _, module in model.named_modules():
        for attr, p in module.named_parameters(recurse=False):
            if p.requires_grad:
                off = isinstance(module, NORMS) or attr == "bias"
                out.append({"params": [p], "weight_decay": 0.0 if off else weight_decay})
    return out
