# expect: failed pitfall=no-barrier
# source: look-alike of Hugging Face Accelerate's save recipe (wait_for_everyone(), then unwrap the model and save on the main process), with nothing after the save: the other ranks go on before the file is complete
import torch
import torch.distributed as dist


def _wait_for_everyone():
    dist.barrier()


def _is_main_process():
    return dist.get_rank() == 0


def save_checkpoint(model, path, local_rank):
    _wait_for_everyone()
    unwrapped = model.module
    if _is_main_process():
        torch.save(unwrapped.state_dict(), path)
