# expect: passed
# source: independent answer: recursion over named_children() carrying an "inside a norm" flag, a visited set for ties, groups collected in a dict keyed by decay
from torch import nn

NORM_TYPES = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.modules.batchnorm._NormBase)


def param_groups(model, weight_decay):
    by_decay = {}
    visited = set()

    def visit(module):
        is_norm = isinstance(module, NORM_TYPES)
        for name, p in module._parameters.items():
            if p is None or id(p) in visited:
                continue
            visited.add(id(p))
            if p.requires_grad:
                wd = 0.0 if is_norm or name == "bias" else weight_decay
                by_decay.setdefault(wd, []).append(p)
        for _, child in module.named_children():
            visit(child)

    visit(model)
    return [{"params": ps, "weight_decay": wd} for wd, ps in by_decay.items()]
