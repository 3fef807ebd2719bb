"""Training memory budget per rank. Run `grind run memory-budget` to check your answer."""


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    """Bytes one rank holds for the model's weights, gradients and optimizer state.

    num_params:     number of trainable parameters P.
    param_dtype:    "fp32", "bf16" or "fp16": the dtype of the weights (and of their gradients).
    optimizer:      "sgd", "sgd_momentum", "adam", "adamw" or "adam8bit".
    master_weights: True when the optimizer updates an fp32 copy of half-precision weights.
    zero_stage:     0 (plain data parallel), 1, 2 or 3.
    world_size:     R, the number of data-parallel ranks.

    Returns {"weights": int, "gradients": int, "optimizer": int, "total_gb": float}: bytes per
    rank for each, and their sum in decimal gigabytes (1e9 bytes).
    """
    raise NotImplementedError("write memory_per_rank")
