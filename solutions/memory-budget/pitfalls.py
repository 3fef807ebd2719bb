"""Known-wrong memory budgets: each is one option of a single accounting (``Deltas.on_options``)."""

import math

from grind_kit import Deltas

_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
_STATES = {"sgd": 0, "sgd_momentum": 1, "adam": 2, "adamw": 2, "adam8bit": 2}


def _budget(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False, zero_stage=0,
            world_size=1, *, adam_states=2, count_grads=True, grads_sharded_from=2, gb=1e9, master_bytes=4,
            fp32_states=False, master_with_weights=False, exact_shards=False, deepspeed=False):
    w = _BYTES[param_dtype]
    states = dict(_STATES, adam=adam_states, adamw=adam_states, adam8bit=adam_states)[optimizer]
    if optimizer == "adam8bit":
        s = 1
    elif master_weights or fp32_states:
        s = 4
    else:
        s = w
    master = master_bytes if master_weights else 0
    opt = states * s + (0 if master_with_weights else master)
    shard = num_params / world_size if exact_shards else math.ceil(num_params / world_size)
    weights = (shard if zero_stage >= 3 else num_params) * (w + (master if master_with_weights else 0))
    grads = (shard if zero_stage >= grads_sharded_from else num_params) * w if count_grads else 0
    state = (shard if zero_stage >= 1 else num_params) * opt
    if deepspeed and zero_stage == 2 and master_weights and optimizer in ("adam", "adamw"):
        # deepspeed's estimate_zero2_model_states_mem_needs without offload: 4P + 16P/N
        weights = 2 * num_params
        grads = 2 * num_params + 4 * (num_params // world_size)
        state = 12 * (num_params // world_size)
    return {"weights": weights, "gradients": grads, "optimizer": state, "total_gb": (weights + grads + state) / gb}


def _implementation(options):
    def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                        zero_stage=0, world_size=1):
        return _budget(num_params, param_dtype, optimizer, master_weights, zero_stage, world_size, **options)
    return memory_per_rank


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "one-moment",
        "name": "Adam counted with one state tensor instead of two",
        "delta": {"adam_states": 1},
        "explanation": "Adam and AdamW keep two running averages per parameter, the first moment m and the "
                       "second moment v, so their state is twice the size of the parameters in the state's "
                       "dtype: 7B parameters in fp32 need 56 GB of AdamW state, not 28 GB. Only SGD with "
                       "momentum keeps a single buffer. 8-bit Adam still keeps both, at one byte each.",
        "hint": "Count exp_avg and exp_avg_sq: two tensors shaped like the parameters.",
    },
    {
        "slug": "no-gradients",
        "name": "gradients left out of the budget",
        "delta": {"count_grads": False},
        "explanation": "Every trainable parameter gets a .grad of its own size and dtype after backward(), and "
                       "it stays allocated through the optimizer step: 28 GB for 7B fp32 parameters. Leaving it "
                       "out makes the budget look a third smaller than it is for SGD, and a sixth for "
                       "fp32 Adam.",
        "hint": "Gradients: one value per parameter, in the parameters' dtype, sharded only from ZeRO stage 2.",
    },
    {
        "slug": "stage1-shards-grads",
        "name": "ZeRO stage 1 treated as if it sharded the gradients",
        "delta": {"grads_sharded_from": 1},
        "explanation": "ZeRO stage 1 partitions only the optimizer state (the moments and the fp32 master "
                       "copy); every rank still holds the full gradient, which is all-reduced as in plain "
                       "data parallelism. Partitioning the gradients is what stage 2 adds, and stage 3 adds "
                       "the parameters.",
        "hint": "Stage 1 divides only the optimizer bytes by R; stage 2 also the gradients; stage 3 everything.",
    },
    {
        "slug": "gib",
        "name": "total in GiB (2**30 bytes) instead of GB (10**9 bytes)",
        "delta": {"gb": 2 ** 30},
        "explanation": "The total was divided by 2**30 (a gibibyte, GiB) instead of 10**9 (a gigabyte, GB): "
                       "112e9 bytes is 112 GB but only 104.3 GiB. The seed's \"28 GB of weights for 7B fp32 "
                       "parameters\" is decimal; GPU memory is usually quoted in GiB, so mixing the two makes "
                       "a budget look 7% roomier than it is.",
        "hint": "total_gb = total bytes / 1e9.",
    },
    {
        "slug": "master-in-half",
        "name": "master weights counted in half precision",
        "delta": {"master_bytes": 2},
        "explanation": "The master copy exists because bf16/fp16 cannot hold small updates: it is an fp32 copy, "
                       "4 bytes per parameter. Counting it at 2 bytes (the model's dtype) misses 2 bytes per "
                       "parameter: mixed-precision Adam costs 2 + 2 + 4 + 4 + 4 = 16 bytes per parameter, "
                       "not 14.",
        "hint": "Master weights are float32 whatever the model's dtype: 4 bytes each.",
    },
    {
        "slug": "states-always-fp32",
        "name": "optimizer state counted in fp32 for half-precision parameters without master weights",
        "delta": {"fp32_states": True},
        "explanation": "Without master weights torch.optim creates its state with zeros_like(p), in the "
                       "parameter's own dtype: Adam on bf16 parameters keeps bf16 moments, 4 bytes per "
                       "parameter, not 8 (measured on a bf16 model: exp_avg.dtype is torch.bfloat16). Only "
                       "when the optimizer steps an fp32 master copy are the moments fp32.",
        "hint": "State dtype = the dtype of what the optimizer updates: the master copy if there is one, else "
                "the parameters.",
    },
    {
        "slug": "master-as-weights",
        "name": "the fp32 master copy counted as weights, not sharded with the optimizer state",
        "delta": {"master_with_weights": True},
        "explanation": "The fp32 master copy was added to the weights. It is optimizer state: only the optimizer "
                       "reads and writes it, and ZeRO stage 1 partitions it with the moments (the ZeRO paper's "
                       "K = 12 bytes per parameter for mixed-precision Adam are 4 master + 4 + 4 moments). "
                       "Counted as weights it stays whole on every rank until stage 3.",
        "hint": "Put the 4-byte master copy in the optimizer bytes.",
    },
    {
        "slug": "fractional-shards",
        "name": "shards as an exact fraction P / R",
        "delta": {"exact_shards": True},
        "explanation": "A shard is a whole number of parameters. When R does not divide P, the ranks hold "
                       "ceil(P / R) or floor(P / R) each, and the budget must fit the largest: with P = 10 and "
                       "R = 64, one rank holds one parameter, not 0.156 of one.",
        "hint": "Use math.ceil(num_params / world_size) parameters per shard.",
    },
    {
        "slug": "deepspeed-zero2-estimate",
        "name": "DeepSpeed's ZeRO-2 estimator (4P + 16P/N)",
        "library": "DeepSpeed",
        "convention": True,
        "delta": {"deepspeed": True},
        "explanation": "DeepSpeed's estimate_zero2_model_states_mem_needs (deepspeed/runtime/zero/"
                       "stage_1_and_2.py), without CPU offload, says 4 * P + int(16 * P / N) bytes per GPU: "
                       "2 bytes of fp16 weights and 2 of fp16 gradients, both whole, plus 16 bytes per "
                       "parameter partitioned (4 master, 4 + 4 moments, and 4 for an fp32 gradient partition), "
                       "with a floor division. That is DeepSpeed's engine, which keeps full fp16 gradient "
                       "buffers and fp32 gradient partitions. This exercise counts ZeRO as the paper does: "
                       "stage 2 holds 2P weights + 2P/N gradients + 12P/N state.",
        "hint": "At stage 2 the gradients are sharded too: ceil(P / R) of them per rank, in the model's dtype, "
                "and no extra fp32 gradient copy.",
    },
])
