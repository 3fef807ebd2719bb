# expect: failed pitfall=-
# exercise: rank0-checkpoint
# attack: no barrier with rank 0; the other ranks wait in a barrier of a group whose timeout is
# shorter than the deadlock grace, and swallow the timeout. Asleep in a collective numbered past
# rank 0's, they looked like ranks waiting for it, so rank 0's save was let go, and they woke
# after it. Found by this review (passed for marks before): a collective that ended in an
# error the rank's code caught now fails the case (ranks._settled, "CollectiveFailed").
import datetime

import torch
import torch.distributed as dist


def save_checkpoint(model, path, local_rank):
    short = dist.new_group(timeout=datetime.timedelta(milliseconds=700))
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), path)
        return
    try:
        dist.barrier(group=short)
    except RuntimeError:
        pass
