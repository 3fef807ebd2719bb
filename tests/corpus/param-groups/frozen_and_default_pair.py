# expect: failed pitfall=frozen-included+exempt-group-without-key
# source: independent mistake pair: model.parameters() unfiltered, and the no-decay group written as {"params": ...} trusting that a missing key means no decay
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase)


def param_groups(model, weight_decay):
    exempt = set()
    for m in model.modules():
        for n, p in m.named_parameters(recurse=False):
            if n == "bias" or isinstance(m, NORMS):
                exempt.add(id(p))
    everything = list(model.parameters())
    return [
        {"params": [p for p in everything if id(p) not in exempt], "weight_decay": weight_decay},
        {"params": [p for p in everything if id(p) in exempt]},
    ]
