# expect: failed pitfall=dim-below-2-exempt
# source: look-alike of nanoGPT's GPT.configure_optimizers: trainable named parameters, decay iff p.dim() >= 2, two groups with explicit weight_decay (written for this corpus)
def param_groups(model, weight_decay):
    trainable = {name: p for name, p in model.named_parameters() if p.requires_grad}
    matrices = [p for p in trainable.values() if p.dim() >= 2]
    vectors = [p for p in trainable.values() if p.dim() < 2]
    return [
        {"params": matrices, "weight_decay": weight_decay},
        {"params": vectors, "weight_decay": 0.0},
    ]
