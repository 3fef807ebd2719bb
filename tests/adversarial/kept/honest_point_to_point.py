# expect: passed pitfall=-
# exercise: rank0-checkpoint
# attack: none; honest answers in point-to-point style. Rank 0 first hears "ready" from every
# other rank (send/recv, not met in the same order by every rank, so not counted as collectives),
# saves, then tells each rank it may go on with isend, which the others wait for with
# irecv().wait(); a barrier closes. Each failed before this review: the count of
# collectives took the receives for collectives, and isend/irecv were not traced at all.
import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    rank, world = dist.get_rank(), dist.get_world_size()
    flag = torch.zeros(1)
    if rank == 0:
        for peer in range(1, world):
            dist.recv(flag, src=peer)
        torch.save(model.module.state_dict(), path)
        for handle in [dist.isend(flag, dst=peer) for peer in range(1, world)]:
            handle.wait()
    else:
        dist.send(flag, dst=0)
        dist.irecv(flag, src=0).wait()
    dist.barrier()
