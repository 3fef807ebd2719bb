# expect: failed pitfall=ndim-heuristic
# source: look-alike of timm.optim.param_groups_weight_decay (and the course's quick recipe): exempt when param.ndim <= 1 or the name ends in ".bias" (written for this corpus)
def param_groups(model, weight_decay, skip_names=()):
    exempt, regular = [], []
    for qualified, tensor in model.named_parameters():
        if not tensor.requires_grad:
            continue
        if tensor.ndim <= 1 or qualified.endswith(".bias") or qualified in skip_names:
            exempt.append(tensor)
        else:
            regular.append(tensor)
    return [{"params": exempt, "weight_decay": 0.0}, {"params": regular, "weight_decay": weight_decay}]
