# expect: passed (practice and marks)
# exercise: rank0-checkpoint
# honest (false-positive probe): Hugging Face accelerate's shape of the same answer
# (`accelerator.wait_for_everyone()`, `accelerator.is_main_process`, `unwrap_model`,
# `accelerator.save` = torch.save of a CPU copy), written with torch.distributed alone: unwrap
# by attribute, copy each tensor to the CPU, save on the main process, then wait for everyone
# with an all_reduce used as the barrier.
import torch
import torch.distributed as dist


def _unwrap(model):
    while hasattr(model, "module"):
        model = model.module
    return model


def save_checkpoint(model, path, local_rank):
    is_main_process = dist.get_rank() == 0
    state = {name: tensor.detach().cpu().clone() for name, tensor in _unwrap(model).state_dict().items()}
    if is_main_process:
        torch.save(state, path)
    token = torch.zeros(1)
    dist.all_reduce(token)  # wait_for_everyone
