# expect: failed
# source: near miss, no known mistake: biases and every normalization layer handled right, plus embedding tables exempted ("embeddings should not be regularised"); minGPT's whitelist also exempts embeddings but exempts learned scales as well, so it must not be named
from torch import nn

NORMS = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
         nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def param_groups(model, weight_decay):
    no_decay = {}
    for module in model.modules():
        skip_all = isinstance(module, NORMS + (nn.Embedding,))
        for attr, p in module.named_parameters(recurse=False):
            if skip_all or attr == "bias":
                no_decay[id(p)] = p
    decay = {}
    for p in model.parameters():
        if p.requires_grad and id(p) not in no_decay:
            decay[id(p)] = p
    return [{"params": list(decay.values()), "weight_decay": weight_decay},
            {"params": [p for p in no_decay.values() if p.requires_grad], "weight_decay": 0.0}]
