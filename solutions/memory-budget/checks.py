"""Cases for memory-budget.

Each case is one training configuration; the call passes it by keyword and observes the three
byte counts (integers, compared exactly) and the total in decimal gigabytes. The oracle
measures torch.optim's state on a real small model, so every expected value for SGD, momentum,
Adam and AdamW is what torch allocates, scaled up; sharding and 8-bit Adam are arithmetic.
"""

import random

from grind_kit import case

_KEYS = ("weights", "gradients", "optimizer")


def budget(subject, config):
    result = subject.memory_per_rank(**config)
    observed = {f"{key} bytes": result[key] for key in _KEYS}
    observed["total GB"] = float(result["total_gb"])
    return observed


def config(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False, zero_stage=0,
           world_size=1):
    settings = dict(num_params=num_params, param_dtype=param_dtype, optimizer=optimizer,
                    master_weights=master_weights, zero_stage=zero_stage, world_size=world_size)

    def inputs():
        return {"config": dict(settings)}
    return inputs


def random_inputs(size, seed):
    """A configuration drawn from the seed; ``size`` sets the parameter count's order of
    magnitude (10**size, times a random factor, so it rarely divides by the rank count)."""
    rng = random.Random(1000 * size + seed)
    dtype = rng.choice(["fp32", "bf16", "fp16"])
    return {"config": dict(
        num_params=rng.randint(10 ** size, 9 * 10 ** size),
        param_dtype=dtype,
        optimizer=rng.choice(["sgd", "sgd_momentum", "adam", "adamw", "adam8bit"]),
        master_weights=dtype != "fp32" and rng.random() < 0.7,
        zero_stage=rng.randint(0, 3),
        world_size=rng.choice([1, 2, 3, 8, 64, 1000]),
    )}


B = 7_000_000_000

CASES = [
    # Public: the seed's numbers (7B in fp32 with AdamW), and mixed precision under ZeRO stage 1.
    case("worked_example_7b_fp32", "example", call=budget, inputs=config(B, "fp32", "adamw")),
    case("worked_example_zero1_bf16", "example", call=budget,
         inputs=config(B, "bf16", "adamw", master_weights=True, zero_stage=1, world_size=8)),

    case("sgd_keeps_no_state", call=budget, inputs=config(1_000_003, "fp32", "sgd")),
    case("sgd_momentum_one_buffer", call=budget, inputs=config(1_000_003, "fp32", "sgd_momentum")),
    case("adam_two_moments", call=budget, inputs=config(125_000_000, "fp32", "adam")),
    case("half_params_no_master", call=budget, inputs=config(350_000_000, "bf16", "adamw")),
    case("fp16_with_master", call=budget, inputs=config(1_300_000_000, "fp16", "adam", master_weights=True)),
    case("momentum_with_master", call=budget,
         inputs=config(60_000_000, "bf16", "sgd_momentum", master_weights=True, zero_stage=1, world_size=4)),
    case("adam8bit", call=budget, inputs=config(B, "bf16", "adam8bit")),
    case("adam8bit_with_master", call=budget,
         inputs=config(B, "bf16", "adam8bit", master_weights=True, zero_stage=2, world_size=16)),
    case("zero2_shards_gradients", call=budget,
         inputs=config(7_500_000_000, "fp16", "adam", master_weights=True, zero_stage=2, world_size=64)),
    case("zero3_shards_everything", call=budget,
         inputs=config(7_500_000_000, "fp16", "adam", master_weights=True, zero_stage=3, world_size=64)),
    case("zero1_fp32", call=budget, inputs=config(B, "fp32", "adamw", zero_stage=1, world_size=4)),
    case("uneven_shards", call=budget,
         inputs=config(1_000_001, "bf16", "adamw", master_weights=True, zero_stage=3, world_size=3)),
    case("one_rank_any_stage", call=budget,
         inputs=config(2_000_000, "bf16", "adamw", master_weights=True, zero_stage=3, world_size=1)),
    case("tiny_model_many_ranks", call=budget, inputs=config(10, "fp32", "adam", zero_stage=3, world_size=64)),

    case("random", "random", call=budget, inputs=random_inputs, sizes=[3, 6, 9, 11], seeds=3),
]
