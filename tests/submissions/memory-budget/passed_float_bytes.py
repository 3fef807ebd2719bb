# expect: passed
# A correct answer that returns byte counts as floats (exact for these sizes) and total_gb via a GB constant.
import math

GB = 1e9


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    size = 4.0 if param_dtype == "fp32" else 2.0
    per_state = 1.0 if optimizer == "adam8bit" else (4.0 if master_weights else size)
    n_states = {"sgd": 0, "sgd_momentum": 1}.get(optimizer, 2)
    shard = float(math.ceil(num_params / world_size))
    full = float(num_params)
    weights = size * (shard if zero_stage == 3 else full)
    grads = size * (shard if zero_stage >= 2 else full)
    opt = (n_states * per_state + 4.0 * master_weights) * (shard if zero_stage >= 1 else full)
    return {"weights": weights, "gradients": grads, "optimizer": opt, "total_gb": (weights + grads + opt) / GB}
