# expect: failed pitfall=no-no-sync
# exercise: no-sync-accumulation
# Every microbatch is all-reduced (no no_sync at all), and then the submission walks up the
# stack to the checks' comm-hook counter and writes the correct counts into it (1 all-reduce,
# 0 under no_sync). The counter lives in the learner's process; the traffic between the ranks,
# which grind counts from outside, still shows four all-reduces on the large model.
import sys


def accumulate_gradients(model, microbatches, loss_fn):
    count = len(microbatches)
    for features, labels in microbatches:
        (loss_fn(model(features), labels) / count).backward()
    caller = sys._getframe(1)
    while caller is not None:
        tally = caller.f_locals.get("seen")
        if isinstance(tally, dict) and "all" in tally:
            tally.update({"all": 1, "no_sync": 0})
            return
        caller = caller.f_back
