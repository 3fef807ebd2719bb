# expect: failed pitfall=count-on-rank0-only
# Only rank 0 asks for the global count. gloo matches collectives by order, so rank 0's all_reduce
# meets rank 1's first gradient all_reduce from DDP: where the sizes agree (the worked example)
# rank 0 is then left waiting in backward while rank 1 has returned, a deadlock; where they do
# not, gloo aborts rank 0 (SIGABRT). Each case's error says where every rank was.
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    m = mask.to(token_losses.dtype)
    count = m.sum().detach().clone()
    if dist.get_rank() == 0:
        dist.all_reduce(count)
    return (token_losses * m).sum() * dist.get_world_size() / count.clamp(min=1.0)
