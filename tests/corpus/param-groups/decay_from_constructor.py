# expect: failed pitfall=decay-group-without-key
# source: independent mistake: copied from code that passed weight_decay to the AdamW constructor, so the decay group carries no key of its own
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase)


def param_groups(model, weight_decay):
    no_wd = {id(p) for m in model.modules() for n, p in m.named_parameters(recurse=False)
             if isinstance(m, NORMS) or n == "bias"}
    params = [p for p in model.parameters() if p.requires_grad]
    return [{"params": [p for p in params if id(p) not in no_wd]},
            {"params": [p for p in params if id(p) in no_wd], "weight_decay": 0.0}]
