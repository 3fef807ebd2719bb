# expect: failed pitfall=states-always-fp32
# source: independent mistake: "optimizer states are always fp32", even for Adam stepping bf16 parameters directly
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    param_b = 4 if param_dtype == "fp32" else 2
    moments = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    per_moment = 1 if optimizer == "adam8bit" else 4
    state = moments * per_moment + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    w = param_b * (shard if zero_stage >= 3 else num_params)
    g = param_b * (shard if zero_stage >= 2 else num_params)
    o = state * (shard if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
