# expect: failed pitfall=mingpt-whitelist
# source: look-alike of minGPT's configure_optimizers idea: only the weights of whitelisted layers (Linear, and Conv here) decay, everything else (embeddings, custom scales, norms, biases) is exempt; a tensor tied to a Linear decays (written for this corpus)
from torch import nn

WHITELIST = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d)


def param_groups(model, weight_decay):
    decay_ids = set()
    for m in model.modules():
        if isinstance(m, WHITELIST):
            decay_ids.add(id(m.weight))
    params = [p for p in model.parameters() if p.requires_grad]
    return [{"params": [p for p in params if id(p) in decay_ids], "weight_decay": weight_decay},
            {"params": [p for p in params if id(p) not in decay_ids], "weight_decay": 0.0}]
