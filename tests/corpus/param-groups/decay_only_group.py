# expect: failed pitfall=exempt-left-out
# source: independent mistake: "no weight decay" read as "not optimized": only the decayed parameters are returned
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase)


def param_groups(model, weight_decay):
    chosen, seen = [], set()
    for m in model.modules():
        for n, p in m.named_parameters(recurse=False):
            if id(p) in seen:
                continue
            seen.add(id(p))
            if p.requires_grad and n != "bias" and not isinstance(m, NORMS):
                chosen.append(p)
    return [{"params": chosen, "weight_decay": weight_decay}]
