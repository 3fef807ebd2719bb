# expect: failed pitfall=master-as-weights
# source: independent mistake: "weights = fp16 copy + fp32 copy", so the master copy is only sharded at stage 3
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    half = 4 if param_dtype == "fp32" else 2
    n = 0 if optimizer == "sgd" else (1 if optimizer == "sgd_momentum" else 2)
    each = 1 if optimizer == "adam8bit" else (4 if master_weights else half)
    weight_bytes = half + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    w = weight_bytes * (shard if zero_stage >= 3 else num_params)
    g = half * (shard if zero_stage >= 2 else num_params)
    o = n * each * (shard if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
