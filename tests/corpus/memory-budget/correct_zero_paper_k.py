# expect: passed
# source: independent answer: the ZeRO paper's notation, (2 + 2 + K) * Psi with K the optimizer bytes per parameter, -(-P // R) for the shard
def _k(optimizer, dtype_bytes, master):
    moments = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    if optimizer == "adam8bit":
        per_moment = 1
    else:
        per_moment = 4 if master else dtype_bytes
    return moments * per_moment + 4 * master


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    psi = num_params
    shard = -(-psi // world_size)
    b = 4 if param_dtype == "fp32" else 2
    k = _k(optimizer, b, bool(master_weights))
    w = b * (shard if zero_stage == 3 else psi)
    g = b * (shard if zero_stage in (2, 3) else psi)
    o = k * (shard if zero_stage else psi)
    return {"weights": int(w), "gradients": int(g), "optimizer": int(o), "total_gb": (w + g + o) * 1e-9}
