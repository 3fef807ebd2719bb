# expect: passed
# source: independent answer: a dataclass of per-parameter costs, sizes read from torch's element_size() of an empty tensor in each dtype
import math
from dataclasses import dataclass

import torch

_TORCH = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


@dataclass
class PerParam:
    weight: int
    grad: int
    state: int


def _costs(dtype, optimizer, master):
    size = torch.empty(0, dtype=_TORCH[dtype]).element_size()
    state_size = 1 if optimizer == "adam8bit" else (torch.empty(0).element_size() if master else size)
    n = 0 if optimizer == "sgd" else 1 if optimizer == "sgd_momentum" else 2
    return PerParam(size, size, n * state_size + (4 if master else 0))


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    c = _costs(param_dtype, optimizer, master_weights)
    part = math.ceil(num_params / world_size)
    weights = c.weight * (part if zero_stage > 2 else num_params)
    grads = c.grad * (part if zero_stage > 1 else num_params)
    opt = c.state * (part if zero_stage > 0 else num_params)
    return dict(weights=weights, gradients=grads, optimizer=opt, total_gb=(weights + grads + opt) / 10 ** 9)
