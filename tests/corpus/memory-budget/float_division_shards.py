# expect: failed pitfall=fractional-shards
# source: independent mistake: the sharded parts divided by R with true division (num_params / world_size, no rounding)
def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    b = 4 if param_dtype == "fp32" else 2
    k = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}[optimizer]
    s = 1 if optimizer == "adam8bit" else (4 if master_weights else b)
    opt_b = k * s + 4 * master_weights
    share = num_params / world_size
    w = b * (share if zero_stage >= 3 else num_params)
    g = b * (share if zero_stage >= 2 else num_params)
    o = opt_b * (share if zero_stage >= 1 else num_params)
    return {"weights": w, "gradients": g, "optimizer": o, "total_gb": (w + g + o) / 1e9}
