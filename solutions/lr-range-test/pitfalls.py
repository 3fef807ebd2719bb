"""Known-wrong variants of lr_range_test: whole range tests a learner could plausibly write.

They share one loop, ``_range_test``, and each pitfall is a *delta* of its keyword options
(grind_kit.Deltas.on_options). Two of them are not mistakes anywhere else: they are the smoothed
curves of fastai's ``LRFinder`` and of pytorch-lr-finder's ``LRFinder.range_test``, carried over
to this exercise's raw-loss contract (``"library"`` and ``"convention": True``)."""

import math

from grind_kit import Deltas


def _smoother(kind):
    """A function from each raw loss to the value that is recorded and tested by the stop rule."""
    if kind == "fastai":
        # fastai's AvgSmoothLoss (beta 0.98): an exponential average started at 0 and divided by
        # 1 - beta ** count, like Adam's bias correction; the first value is the raw loss.
        state = {"avg": 0.0, "count": 0}

        def smooth(loss):
            state["count"] += 1
            state["avg"] = 0.98 * state["avg"] + 0.02 * loss
            return state["avg"] / (1 - 0.98 ** state["count"])
        return smooth
    if kind == "lr_finder":
        # pytorch-lr-finder's range_test (smooth_f 0.05): the first loss as it is, then
        # 0.05 * loss + 0.95 * the previous smoothed value, with no bias correction.
        state = {"last": None}

        def smooth(loss):
            state["last"] = loss if state["last"] is None else 0.05 * loss + 0.95 * state["last"]
            return state["last"]
        return smooth
    return lambda loss: loss


def _range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0, *,
                groups="all", growth="exponential", first_step=0, set_lr="before", zero=True, smooth=None,
                stop_against="best", record_last=True, suggest="below_divergence", read_ahead=False):
    lrs, losses = [], []
    smooth_fn = _smoother(smooth)

    def set_groups(lr):
        for group in (optimizer.param_groups if groups == "all" else optimizer.param_groups[:1]):
            group["lr"] = lr

    def lr_at(step):
        step += first_step
        if growth == "linear":  # 10x after one decade's steps, but by equal increments
            return start_lr * (1 + 9 * step / steps_per_decade)
        return start_lr * 10 ** (step / steps_per_decade)

    for step, (x, y) in enumerate(batches):
        lr = lr_at(step)
        if set_lr == "before":
            set_groups(lr)
        if zero:
            optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        if set_lr == "after":  # meant for this step, applied to the next one
            set_groups(lr)
        value = smooth_fn(loss.item())
        if stop_against == "previous":
            diverged = bool(losses) and value > stop_factor * losses[-1]
        else:
            diverged = value > stop_factor * min(losses + [value])
        if diverged and not record_last:
            break
        lrs.append(lr)
        losses.append(value)
        if diverged:
            if read_ahead:  # a prefetching loop had already taken the next minibatch
                next(batches, None)
            break
    else:
        return lrs, losses, math.nan
    if suggest == "at_minimum":
        return lrs, losses, lrs[losses.index(min(losses))]
    return lrs, losses, lr / 10


def _implementation(options):
    def lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7, steps_per_decade=50, stop_factor=4.0):
        return _range_test(model, loss_fn, batches, optimizer, start_lr, steps_per_decade, stop_factor, **options)
    return lr_range_test


MISTAKES = Deltas.on_options(_implementation)
combine = MISTAKES.combine

# Pairs a real answer makes together; every subject replays whole sweeps, so not all 45 pairs.
COMBINE = [
    ("first-group-only", "suggest-at-minimum"),
    ("first-group-only", "stop-against-previous-loss"),
    ("linear-growth", "first-group-only"),
    ("suggest-at-minimum", "stop-against-previous-loss"),
    ("divergent-point-dropped", "suggest-at-minimum"),
    ("off-by-one-step", "first-group-only"),
    ("fastai-smoothed-curve", "suggest-at-minimum"),
]

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "first-group-only",
        "name": "the learning rate set on the first param group only",
        "delta": {"groups": "first"},
        "explanation": "Only optimizer.param_groups[0] got the new learning rate. Every other group (here the "
                       "biases, kept apart for weight decay) trained at whatever lr the optimizer was built "
                       "with during the whole sweep, so the curve mixes two learning rates and the loss it "
                       "records is not the loss of the lr it reports.",
        "hint": "Loop over every group: for group in optimizer.param_groups: group['lr'] = lr.",
    },
    {
        "slug": "stop-against-previous-loss",
        "name": "the stop rule against the previous loss instead of the best one",
        "delta": {"stop_against": "previous"},
        "explanation": "The test stopped only when a loss was stop_factor times the loss of the step before. A "
                       "curve that climbs a little at every step never makes such a jump, so the sweep ran on "
                       "far past the point where the loss had blown up. The rule compares with the smallest "
                       "loss recorded so far.",
        "hint": "Stop when losses[-1] > stop_factor * min(losses).",
    },
    {
        "slug": "linear-growth",
        "name": "linear instead of exponential growth",
        "delta": {"growth": "linear"},
        "explanation": "The learning rate grew by equal steps, start_lr * (1 + 9 * step / steps_per_decade): "
                       "10x after one decade's steps, but only 19x after two and 28x after three, where the "
                       "test multiplies by 10 every decade (100x, 1000x). A linear sweep spends almost all its "
                       "steps near its end and cannot cover the seven or eight decades a range test needs.",
        "hint": "lr = start_lr * 10 ** (step / steps_per_decade), with step counted from 0.",
    },
    {
        "slug": "suggest-at-minimum",
        "name": "the suggested lr taken at the lowest loss",
        "delta": {"suggest": "at_minimum"},
        "explanation": "The suggestion was the learning rate where the recorded loss was lowest. The bottom of "
                       "the curve is already close to where training becomes unstable, and it moves with the "
                       "noise of one batch; the course's rule is an order of magnitude below the divergence "
                       "point, the lr at which the stop rule fired. (fastai's 'minimum' suggestion divides the "
                       "lr at the minimum by 10: another rule again.)",
        "hint": "Return the lr of the step that triggered the stop, divided by 10.",
    },
    {
        "slug": "divergent-point-dropped",
        "name": "the diverging step left off the curve",
        "delta": {"record_last": False},
        "explanation": "The stop rule was tested before the step's lr and loss were appended, and the loop broke "
                       "out without recording them, so the curve ends one point early: the point that shows the "
                       "divergence is missing. The step that fires the rule is recorded, then the test stops.",
        "hint": "Append lr and loss first, then test losses[-1] > stop_factor * min(losses) and break.",
    },
    {
        "slug": "off-by-one-step",
        "name": "the growth counted from step 1",
        "delta": {"first_step": 1},
        "explanation": "The first step already ran at start_lr * 10 ** (1 / steps_per_decade): the exponent "
                       "counted steps from 1, so the whole sweep ran one step ahead and never tried start_lr "
                       "itself. Step 0 runs at start_lr exactly, step steps_per_decade at 10 * start_lr.",
        "hint": "Use enumerate's index from 0: lr = start_lr * 10 ** (step / steps_per_decade).",
    },
    {
        "slug": "lr-set-after-step",
        "name": "the learning rate set after the step",
        "delta": {"set_lr": "after"},
        "explanation": "Each step's learning rate was written into the param groups after optimizer.step(), so "
                       "every step ran at the previous step's lr, and the first one at whatever the optimizer "
                       "was built with (0.05 here, a training lr, not 1e-7). The curve pairs each loss with an "
                       "lr that step never used.",
        "hint": "Set every group's lr for this step before calling optimizer.step().",
    },
    {
        "slug": "gradients-never-cleared",
        "name": "gradients never cleared",
        "delta": {"zero": False},
        "explanation": "optimizer.zero_grad() was never called, so backward() added each batch's gradient to "
                       "all the earlier ones and every step used their running sum: the steps grew with the "
                       "number of batches seen, not only with the learning rate, and the loss diverged early.",
        "hint": "Call optimizer.zero_grad() before each backward().",
    },
    {
        "slug": "reads-past-the-stop",
        "name": "one minibatch read past the stop",
        "delta": {"read_ahead": True},
        "explanation": "The curve and the suggestion are right, but the loop fetched the next minibatch before "
                       "testing the stop rule (a prefetching while loop), so one more minibatch was taken from "
                       "the iterator than the test trained on. The iterator is the caller's: a data stream that "
                       "training goes on reading after the test silently loses that batch.",
        "hint": "Test the stop rule before asking the iterator for anything more; a for loop over batches "
                "that breaks on the rule does exactly that.",
    },
    {
        "slug": "fastai-smoothed-curve",
        "name": "the curve smoothed as fastai's LRFinder does",
        "library": "fastai (LRFinder callback, Learner.lr_find)",
        "convention": True,
        "delta": {"smooth": "fastai"},
        "explanation": "The recorded losses, and the stop rule, used an exponentially smoothed loss with a bias "
                       "correction: avg = 0.98 * avg + 0.02 * loss, divided by 1 - 0.98 ** count. That is "
                       "fastai's convention: its Recorder keeps AvgSmoothLoss(beta=0.98) values, and its "
                       "LRFinder callback stops when that smoothed value exceeds 4 times its own minimum. "
                       "Smoothing lags, so fastai stops later than the raw rule and its curve is not the loss "
                       "each step measured. This exercise records the raw loss of each step and applies the "
                       "stop rule to it.",
        "hint": "Record loss.item() as it is, and test it against stop_factor * min(losses) of the raw losses.",
    },
    {
        "slug": "lr-finder-smoothed-curve",
        "name": "the curve smoothed as pytorch-lr-finder does",
        "library": "pytorch-lr-finder (torch_lr_finder.LRFinder.range_test)",
        "convention": True,
        "delta": {"smooth": "lr_finder"},
        "explanation": "The recorded losses, and the stop rule, used pytorch-lr-finder's smoothing: the first "
                       "loss as it is, then 0.05 * loss + 0.95 * the previous smoothed value, with no bias "
                       "correction (its smooth_f=0.05), and the best loss is the minimum of those smoothed "
                       "values. Its default threshold is also 5x (diverge_th=5), not the course's 4x. The "
                       "smoothed curve moves 20 times slower than the loss, so the test stops late. This "
                       "exercise records the raw loss of each step and applies the stop rule to it.",
        "hint": "Record loss.item() as it is, and test it against stop_factor * min(losses) of the raw losses.",
    },
])
