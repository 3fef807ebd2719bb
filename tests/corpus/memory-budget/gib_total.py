# expect: failed pitfall=gib
# source: independent mistake: total reported in GiB (bytes / 1024**3), the unit nvidia-smi and torch.cuda report
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    b = 2 if param_dtype in ("bf16", "fp16") else 4
    n_state = dict(sgd=0, sgd_momentum=1, adam=2, adamw=2, adam8bit=2)[optimizer]
    state_b = 1 if optimizer == "adam8bit" else (4 if master_weights else b)
    k = n_state * state_b + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    parts = {
        "weights": b * (shard if zero_stage >= 3 else num_params),
        "gradients": b * (shard if zero_stage >= 2 else num_params),
        "optimizer": k * (shard if zero_stage >= 1 else num_params),
    }
    parts["total_gb"] = sum(parts.values()) / 1024 ** 3
    return parts
