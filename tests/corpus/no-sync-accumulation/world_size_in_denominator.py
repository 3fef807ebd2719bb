# expect: failed pitfall=divided-by-world-size
# source: "all_reduce sums the gradients", so the loss is pre-divided by accumulation steps times world size, although DDP already averages
import contextlib

import torch.distributed as dist


def accumulate_gradients(model, microbatches, loss_fn):
    scale = 1.0 / (len(microbatches) * dist.get_world_size())
    for i, (x, y) in enumerate(microbatches):
        sync = i == len(microbatches) - 1
        with contextlib.ExitStack() as stack:
            if not sync:
                stack.enter_context(model.no_sync())
            (loss_fn(model(x), y) * scale).backward()
