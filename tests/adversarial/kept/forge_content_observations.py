# expect: failed pitfall=module-prefix
# exercise: rank0-checkpoint
# attack: saves the DDP wrapper's state_dict (every key "module."), then forges what the checks
# report: a profile hook catches the checks' function returning its observations on this rank
# and writes into that dict the values a correct file would give ("loads with weights_only",
# "bare keys", "saved state", "readable at return"). Those facts are now made by grind from the
# kept file after the run; whatever the rank reports under their names is dropped.
import sys

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    right = model.module.state_dict()
    state = torch.cat([v.detach().to(torch.float64).reshape(-1) for v in right.values()])

    def hook(frame, event, arg):
        if event == "return" and type(arg) is dict and "torch.save calls" in arg:
            forged = state
            if len(state) > 4096:
                forged = torch.stack([state.sum(), (state * state).sum(), state[:: max(len(state) // 64, 1)].sum()])
                arg["saved state (sum, sum of squares, sampled sum)"] = forged
            else:
                arg["saved state"] = forged
            arg.update({"readable at return": 1, "loads with weights_only": 1, "bare keys": 1})
            sys.setprofile(None)

    if dist.get_rank() == 0:
        torch.save(model.state_dict(), path)
    dist.barrier()
    sys.setprofile(hook)
