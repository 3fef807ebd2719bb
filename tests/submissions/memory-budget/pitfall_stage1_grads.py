# expect: failed pitfall=stage1-shards-grads
# The learner believes every ZeRO stage partitions gradients.
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    b = 4 if param_dtype == "fp32" else 2
    n = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    s = 1 if optimizer == "adam8bit" else (4 if master_weights else b)
    k = n * s + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    w = b * (shard if zero_stage == 3 else num_params)
    g = b * (shard if zero_stage > 0 else num_params)
    o = k * (shard if zero_stage > 0 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
