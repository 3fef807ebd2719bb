# expect: failed pitfall=layernorm-only
# source: independent mistake: a norm is recognised by "LayerNorm" in its class name, so BatchNorm, GroupNorm, InstanceNorm and RMSNorm gains decay
def param_groups(model, weight_decay):
    groups = {True: [], False: []}
    seen = set()
    for module in model.modules():
        layer_norm = "LayerNorm" in type(module).__name__
        for name, p in module.named_parameters(recurse=False):
            if id(p) in seen or not p.requires_grad:
                continue
            seen.add(id(p))
            groups[layer_norm or name == "bias"].append(p)
    return [{"params": groups[False], "weight_decay": weight_decay},
            {"params": groups[True], "weight_decay": 0.0}]
