# expect: failed pitfall=one-moment+gib
# source: independent pair of mistakes: one Adam state ("the momentum") and the total in GiB
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    b = 4 if param_dtype == "fp32" else 2
    states = 0 if optimizer == "sgd" else 1
    sb = 1 if optimizer == "adam8bit" else (4 if master_weights else b)
    k = states * sb + (4 if master_weights else 0)
    r = math.ceil(num_params / world_size)
    w = b * (r if zero_stage >= 3 else num_params)
    g = b * (r if zero_stage >= 2 else num_params)
    o = k * (r if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 2 ** 30}
