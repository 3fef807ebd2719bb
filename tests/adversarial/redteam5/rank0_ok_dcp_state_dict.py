# redteam5 (no false positive, integrity): rank0-checkpoint, a CORRECT answer that takes the bare keys
# from torch.distributed.checkpoint.state_dict.get_model_state_dict (imports torch.distributed.checkpoint
# after the baseline). Expected and observed: PASSED in practice and marks.
import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import get_model_state_dict


def save_checkpoint(model, path, local_rank):
    state = get_model_state_dict(model)  # bare keys, DDP's "module." prefix removed by torch
    if dist.get_rank() == 0:
        torch.save(state, path)
    dist.barrier()
