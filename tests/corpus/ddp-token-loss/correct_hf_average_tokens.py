# expect: passed
# source: independent answer shaped like the HF Trainer with average_tokens_across_devices on: num_items_in_batch gathered and summed over devices, the summed loss divided by it and multiplied by the number of processes
import torch
import torch.distributed as dist


def ddp_token_loss(token_losses, mask):
    num_items = mask.sum().to(torch.int64).reshape(1)
    gathered = [torch.zeros_like(num_items) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, num_items)
    num_items_in_batch = int(torch.cat(gathered).sum())
    loss = (token_losses * mask.to(token_losses.dtype)).sum() / max(num_items_in_batch, 1)
    return loss * dist.get_world_size()
