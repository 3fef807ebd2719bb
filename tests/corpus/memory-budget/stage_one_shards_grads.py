# expect: failed pitfall=stage1-shards-grads
# source: independent mistake: "stage 1 = optimizer + gradients, stage 3 = parameters", gradients partitioned from stage 1
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    nbytes = 4 if param_dtype == "fp32" else 2
    st = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    st_bytes = 1 if optimizer == "adam8bit" else (4 if master_weights else nbytes)
    per_opt = st * st_bytes + (4 if master_weights else 0)
    s = math.ceil(num_params / world_size)
    weights = nbytes * (s if zero_stage >= 3 else num_params)
    grads = nbytes * (s if zero_stage >= 1 else num_params)
    opt = per_opt * (s if zero_stage >= 1 else num_params)
    return {"weights": weights, "gradients": grads, "optimizer": opt, "total_gb": (weights + grads + opt) / 1e9}
