# expect: failed pitfall=no-no-sync
# exercise: no-sync-accumulation
# A harder forgery: at import, replace the comm-hook module's all-reduce with a wrapper of its
# own (the checks' hook calls it by attribute), let every microbatch synchronise, then walk every
# frame above and reset each counter it finds. Nothing the learner's process holds can hide the
# bytes that crossed between the ranks.
import sys

from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

_real = default_hooks.allreduce_hook


def _quiet(state, bucket):
    return _real(state, bucket)


default_hooks.allreduce_hook = _quiet


def accumulate_gradients(model, microbatches, loss_fn):
    for features, labels in microbatches:
        (loss_fn(model(features), labels) / len(microbatches)).backward()
    frame = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, dict) and set(value) == {"all", "no_sync"}:
                value["all"], value["no_sync"] = 1, 0
        frame = frame.f_back
