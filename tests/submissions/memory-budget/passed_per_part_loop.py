# expect: passed
# A correct answer that walks the parts in a loop and keeps the byte counts as Python ints.
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    dtype_bytes = {"fp32": 4, "bf16": 2, "fp16": 2}[param_dtype]
    if optimizer == "adam8bit":
        opt_bytes = 2
    else:
        moments = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2}[optimizer]
        opt_bytes = moments * (4 if master_weights else dtype_bytes)
    if master_weights:
        opt_bytes += 4
    result = {}
    for name, per, stage in (("weights", dtype_bytes, 3), ("gradients", dtype_bytes, 2), ("optimizer", opt_bytes, 1)):
        held = math.ceil(num_params / world_size) if zero_stage >= stage else num_params
        result[name] = held * per
    result["total_gb"] = (result["weights"] + result["gradients"] + result["optimizer"]) / 1e9
    return result
