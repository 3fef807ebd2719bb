# expect: failed pitfall=no-gradients
# source: independent mistake: "model + optimizer" budget, the gradients forgotten (reported as 0)
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    width = {"fp32": 4}.get(param_dtype, 2)
    moments = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}[optimizer]
    each = 1 if optimizer == "adam8bit" else 4 if master_weights else width
    per = moments * each + 4 * int(master_weights)
    shard = math.ceil(num_params / world_size)
    w = width * (shard if zero_stage == 3 else num_params)
    o = per * (shard if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": 0, "optimizer": o, "total_gb": (w + o) / 1e9}
