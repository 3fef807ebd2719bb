# expect: failed pitfall=local-rank-zero
# source: scripts written for torch.distributed.launch --local_rank, which reuse args.local_rank for every "is this the main process" test, checkpointing included
import torch
import torch.distributed


class Args:
    def __init__(self, local_rank):
        self.local_rank = local_rank


def save_checkpoint(model, path, local_rank):
    args = Args(local_rank)
    if args.local_rank in (-1, 0):
        torch.save(model.module.state_dict(), path)
    torch.distributed.barrier()
