# expect: failed pitfall=master-in-half
# source: independent mistake: the master copy sized like the model (param_dtype bytes), the moments fp32
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    p = 4 if param_dtype == "fp32" else 2
    m = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}[optimizer]
    mb = 1 if optimizer == "adam8bit" else (4 if master_weights else p)
    per_state = m * mb + (p if master_weights else 0)
    sh = math.ceil(num_params / world_size)
    out = {"weights": p * (sh if zero_stage >= 3 else num_params),
           "gradients": p * (sh if zero_stage >= 2 else num_params),
           "optimizer": per_state * (sh if zero_stage >= 1 else num_params)}
    out["total_gb"] = (out["weights"] + out["gradients"] + out["optimizer"]) / 1e9
    return out
