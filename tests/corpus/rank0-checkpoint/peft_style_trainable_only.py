# expect: failed pitfall=parameters-only
# source: adapter-tuning habit of saving only the trainable weights (a dict built from named_parameters filtered on requires_grad), applied to a full model: the buffers are left behind
from collections import OrderedDict

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    if dist.get_rank() == 0:
        net = model.module
        trainable = OrderedDict((name, p.detach().clone()) for name, p in net.named_parameters() if p.requires_grad)
        torch.save(trainable, path)
    dist.barrier()
