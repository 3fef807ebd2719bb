# expect: failed pitfall=dim-below-2-exempt+frozen-included
# source: look-alike of nanoGPT's dim >= 2 split (written for this corpus) without its requires_grad filter, so frozen tensors ride along in the groups
def param_groups(model, weight_decay):
    params = dict(model.named_parameters())
    matrices = [p for p in params.values() if p.dim() >= 2]
    vectors = [p for p in params.values() if p.dim() < 2]
    return [
        {"params": matrices, "weight_decay": weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
