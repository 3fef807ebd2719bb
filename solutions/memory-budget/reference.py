"""Reference: the bytes one rank holds for weights, gradients and optimizer state.

Per parameter, then times the parameter count, then divided over the ranks for whatever the
ZeRO stage shards (the largest shard, ceil(P / R) parameters, is what one rank must fit).
"""

import math

BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}

# How many tensors shaped like the parameters each optimizer keeps.
STATES = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    weight_bytes = BYTES[param_dtype]
    grad_bytes = weight_bytes  # autograd makes each .grad in its parameter's dtype
    if optimizer == "adam8bit":
        state_bytes = 1  # one byte per state entry (the per-block scales are left out)
    elif master_weights:
        state_bytes = 4  # the moments live next to the fp32 master copy
    else:
        state_bytes = weight_bytes  # torch.optim makes its state with zeros_like(p)
    # The fp32 master copy is optimizer state in ZeRO's accounting: it is what the optimizer
    # updates, and stage 1 shards it together with the moments.
    optimizer_bytes = STATES[optimizer] * state_bytes + (4 if master_weights else 0)

    shard = math.ceil(num_params / world_size)
    weights = (shard if zero_stage >= 3 else num_params) * weight_bytes
    gradients = (shard if zero_stage >= 2 else num_params) * grad_bytes
    state = (shard if zero_stage >= 1 else num_params) * optimizer_bytes
    return {
        "weights": weights,
        "gradients": gradients,
        "optimizer": state,
        "total_gb": (weights + gradients + state) / 1e9,  # decimal gigabytes, as the seed's "28 GB"
    }
