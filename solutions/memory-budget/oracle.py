"""Oracle: per-parameter bytes measured on a real small model with torch.optim, then scaled.

For the optimizers torch has (SGD, SGD with momentum, Adam, AdamW), a small ``nn.Sequential``
in the requested dtype takes one real step, and the bytes of every ``.grad`` and of every
per-element state tensor are counted and divided by its number of parameters. With master
weights the optimizer runs on an fp32 copy of the model (the AMP "O2" recipe), and that copy
counts as optimizer state. torch's scalar ``step`` tensors are one per parameter tensor, not
per parameter, and are left out. torch has no 8-bit Adam, so that one is arithmetic: two
one-byte states per parameter. Sharding is arithmetic too: the largest of R shards.
"""

import math

import torch

_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.1)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=0.1, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3)
    return torch.optim.AdamW(params, lr=1e-3)


def _measure(param_dtype, optimizer, master_weights):
    """Bytes per parameter of (weights, gradients, optimizer state), measured."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    model = model.to(_DTYPES[param_dtype])
    count = sum(p.numel() for p in model.parameters())
    x = torch.randn(4, 6).to(_DTYPES[param_dtype])
    model(x).float().pow(2).mean().backward()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    grads = sum(p.grad.numel() * p.grad.element_size() for p in model.parameters())
    if optimizer == "adam8bit":
        return weights / count, grads / count, 2.0 + (4.0 if master_weights else 0.0)
    if master_weights:
        master = [p.detach().float().clone().requires_grad_(True) for p in model.parameters()]
        for m, p in zip(master, model.parameters()):
            m.grad = p.grad.float()
        stepped = master
        extra = sum(m.numel() * m.element_size() for m in master)
    else:
        stepped = list(model.parameters())
        extra = 0
    opt = _optimizer(optimizer, stepped)
    opt.step()
    state = extra
    for per_param in opt.state.values():
        for key, value in per_param.items():
            if torch.is_tensor(value) and key != "step":
                state += value.numel() * value.element_size()
    return weights / count, grads / count, state / count


def memory_per_rank(num_params, param_dtype="fp32", optimizer="adamw", master_weights=False,
                    zero_stage=0, world_size=1):
    per_weight, per_grad, per_state = _measure(param_dtype, optimizer, master_weights)
    shard = math.ceil(num_params / world_size)
    weights = round((shard if zero_stage >= 3 else num_params) * per_weight)
    gradients = round((shard if zero_stage >= 2 else num_params) * per_grad)
    state = round((shard if zero_stage >= 1 else num_params) * per_state)
    return {"weights": weights, "gradients": gradients, "optimizer": state,
            "total_gb": (weights + gradients + state) / 1e9}
