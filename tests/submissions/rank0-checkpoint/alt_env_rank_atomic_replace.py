# expect: passed
# Rank from the RANK variable, prefix stripped with torch's helper on a copy of the wrapper's
# state_dict, written to a temporary name and renamed into place; an all_reduce of a dummy
# tensor serves as the barrier.
import os

import torch
import torch.distributed as dist
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present


def save_checkpoint(model, path, local_rank):
    if int(os.environ["RANK"]) == 0:
        state = dict(model.state_dict())
        consume_prefix_in_state_dict_if_present(state, "module.")
        tmp = path + ".partial"
        torch.save(state, tmp)
        os.replace(tmp, path)
    dist.all_reduce(torch.zeros(1))
