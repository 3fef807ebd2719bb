# expect: passed
# source: look-alike of Hugging Face Accelerate's helpers (is_main_process, unwrap_model, wait_for_everyone) written for this exercise: main process = global rank 0 of an initialised group, the model unwrapped through its .module attribute, then a barrier
import torch
import torch.distributed as dist


def is_main_process():
    return not (dist.is_available() and dist.is_initialized()) or dist.get_rank() == 0


def unwrap_model(model):
    while hasattr(model, "module"):
        model = model.module
    return model


def wait_for_everyone():
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def save_checkpoint(model, path, local_rank):
    if is_main_process():
        torch.save(unwrap_model(model).state_dict(), path)
    wait_for_everyone()
