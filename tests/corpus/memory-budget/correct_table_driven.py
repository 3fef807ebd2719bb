# expect: passed
# source: independent answer: per-parameter byte tables for each part, and a table of which ZeRO stage starts sharding which part
import math

SIZE = {"fp32": 4, "bf16": 2, "fp16": 2}
N_STATES = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}
SHARDED_FROM = {"optimizer": 1, "gradients": 2, "weights": 3}


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    state_size = 1 if optimizer == "adam8bit" else (4 if master_weights else SIZE[param_dtype])
    per_param = {
        "weights": SIZE[param_dtype],
        "gradients": SIZE[param_dtype],
        "optimizer": N_STATES[optimizer] * state_size + (4 if master_weights else 0),
    }
    out = {}
    for part, nbytes in per_param.items():
        count = math.ceil(num_params / world_size) if zero_stage >= SHARDED_FROM[part] else num_params
        out[part] = count * nbytes
    out["total_gb"] = sum(out.values()) / 1e9
    return out
