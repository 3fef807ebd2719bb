# expect: failed pitfall=every-rank-writes+module-prefix
# source: a single-GPU script moved to DDP by wrapping the model and nothing else: the unguarded save now runs on every rank, on the wrapper's state_dict
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    torch.save(model.state_dict(), path)
    dist.barrier()
