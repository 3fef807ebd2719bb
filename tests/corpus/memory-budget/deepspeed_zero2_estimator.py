# expect: failed pitfall=deepspeed-zero2-estimate
# source: look-alike of deepspeed.runtime.zero.stage_1_and_2.estimate_zero2_model_states_mem_needs (cpu_offload=False): 4 * P + int(16 * P / N) for mixed-precision Adam at stage 2, split as fp16 weights and gradients whole, fp32 gradient partition, 12 bytes of state
import math


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    if zero_stage == 2 and master_weights and optimizer in ("adam", "adamw"):
        part = num_params // world_size
        w, g, o = 2 * num_params, 2 * num_params + 4 * part, 12 * part
        return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
    b = 4 if param_dtype == "fp32" else 2
    n = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    each = 1 if optimizer == "adam8bit" else (4 if master_weights else b)
    k = n * each + (4 if master_weights else 0)
    shard = math.ceil(num_params / world_size)
    w = b * (shard if zero_stage >= 3 else num_params)
    g = b * (shard if zero_stage >= 2 else num_params)
    o = k * (shard if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
