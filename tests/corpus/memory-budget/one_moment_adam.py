# expect: failed pitfall=one-moment
# source: independent mistake: "Adam keeps a momentum buffer" -- one state tensor for every optimizer that has state
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    b = 4 if param_dtype == "fp32" else 2
    has_state = optimizer != "sgd"
    state = (1 if optimizer == "adam8bit" else (4 if master_weights else b)) if has_state else 0
    opt = state + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    return {
        "weights": b * (shard if zero_stage >= 3 else num_params),
        "gradients": b * (shard if zero_stage >= 2 else num_params),
        "optimizer": opt * (shard if zero_stage >= 1 else num_params),
        "total_gb": 0.0,
    } | {"total_gb": (b * (shard if zero_stage >= 3 else num_params) + b * (shard if zero_stage >= 2 else num_params)
                      + opt * (shard if zero_stage >= 1 else num_params)) / 1e9}
