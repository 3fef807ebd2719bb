"""Known-wrong variants of lr_multiplier. Each one is a whole implementation a learner could
plausibly write, wrong in exactly one way, and the judge must name it when it sees it."""

import math


def _decay(step, warmup_steps, total_steps, min_ratio):
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def _correct(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    return _decay(step, warmup_steps, total_steps, min_ratio)


def warmup_plus_one(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return (step + 1) / warmup_steps  # step 0 already gets 1 / warmup_steps
    return _decay(step, warmup_steps, total_steps, min_ratio)


def one_based_steps(step, warmup_steps, total_steps, min_ratio=0.0):
    # the whole curve counts updates from 1: every value arrives one update early
    return _correct(step + 1, warmup_steps, total_steps, min_ratio)


def decays_to_zero(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return 0.5 * (1.0 + math.cos(math.pi * progress))  # min_ratio never used


def floor_by_clamping(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return max(min_ratio, 0.5 * (1.0 + math.cos(math.pi * progress)))  # cut off, not rescaled


def cosine_over_total(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = min(1.0, (step - warmup_steps) / total_steps)  # should be total - warmup
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def progress_not_clamped(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)  # goes past 1
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * progress))


def zero_warmup_division(step, warmup_steps, total_steps, min_ratio=0.0):
    if step <= warmup_steps:
        return step / warmup_steps  # 0 / 0 when warmup_steps == 0
    return _decay(step, warmup_steps, total_steps, min_ratio)


def integer_division(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step // warmup_steps  # 0 for every warmup step
    return _decay(step, warmup_steps, total_steps, min_ratio)


PITFALLS = [
    {
        "slug": "warmup-off-by-one",
        "name": "warmup off by one: (step+1)/warmup convention",
        "impl": warmup_plus_one,
        "explanation": "Your warmup uses (step + 1) / warmup_steps. That is the convention of Hugging Face's "
                       "get_cosine_with_min_lr_schedule_with_warmup_lr_rate and of many copies of "
                       "get_cosine_schedule_with_warmup found online: update 0 already trains at "
                       "max_lr / warmup_steps and the peak arrives at step warmup_steps - 1. This exercise "
                       "(like transformers' get_cosine_schedule_with_warmup and "
                       "get_cosine_with_min_lr_schedule_with_warmup) uses step / warmup_steps: update 0 gets "
                       "exactly 0 and the peak is reached at step == warmup_steps. Neither is wrong in "
                       "practice, but a schedule is a contract, and mixing the two shifts every warmup "
                       "value by one update.",
        "hint": "Return step / warmup_steps during warmup, so step 0 gives 0.",
    },
    {
        "slug": "one-based-steps",
        "name": "whole schedule one update early (steps counted from 1)",
        "impl": one_based_steps,
        "explanation": "Every value arrives one update early: you evaluate the schedule at step + 1, as if "
                       "updates were numbered from 1 (this is what transformers' "
                       "get_cosine_with_min_lr_schedule_with_warmup_lr_rate does, in both its warmup and its "
                       "decay). LambdaLR calls the function with 0 for the first update, 1 for the second, "
                       "and so on, so step 0 must give 0 and the floor must be reached exactly at "
                       "step == total_steps.",
        "hint": "Use the step index as given: step 0 is the first update.",
    },
    {
        "slug": "decays-to-zero",
        "name": "decaying to 0 instead of the floor",
        "impl": decays_to_zero,
        "explanation": "The cosine falls all the way to 0 and min_ratio is never used, so the end of training "
                       "runs at learning rate 0 instead of min_ratio * max_lr. The half cosine "
                       "0.5 * (1 + cos(pi * progress)) goes from 1 to 0; it has to be mapped onto "
                       "[min_ratio, 1].",
        "hint": "Return min_ratio + (1 - min_ratio) * 0.5 * (1 + cos(pi * progress)).",
    },
    {
        "slug": "floor-by-clamping",
        "name": "floor applied by clamping instead of rescaling",
        "impl": floor_by_clamping,
        "explanation": "The cosine still decays from 1 to 0 and is then cut off at min_ratio with max(...). The "
                       "end value is right, but the curve is wrong: it hits the floor early and sits on it, "
                       "with a kink, for the whole tail of the decay. The cosine should be squeezed into "
                       "[min_ratio, 1] so that it reaches the floor exactly at total_steps.",
        "hint": "Rescale instead of clamping: min_ratio + (1 - min_ratio) * cosine.",
    },
    {
        "slug": "cosine-over-total",
        "name": "cosine over total_steps instead of total_steps - warmup_steps",
        "impl": cosine_over_total,
        "explanation": "Progress was measured as (step - warmup_steps) / total_steps. The decay only lasts "
                       "total_steps - warmup_steps updates, so with that denominator progress never gets to 1: "
                       "the learning rate is still above the floor at total_steps and the end of training "
                       "never reaches min_ratio.",
        "hint": "Divide by the length of the decay: total_steps - warmup_steps.",
    },
    {
        "slug": "progress-not-clamped",
        "name": "progress not clamped past total_steps (LR rises again)",
        "impl": progress_not_clamped,
        "explanation": "Past total_steps the progress goes above 1 and cos keeps oscillating, so the learning "
                       "rate climbs back up towards the peak (at progress 2 it is max_lr again). Training "
                       "that runs a few extra steps, or a resumed run, would suddenly get a large learning "
                       "rate. The schedule must stay on the floor once it gets there.",
        "hint": "Clamp progress with min(1.0, progress).",
    },
    {
        "slug": "zero-warmup-division",
        "name": "division by zero when warmup_steps = 0",
        "impl": zero_warmup_division,
        "explanation": "With warmup_steps = 0 the warmup branch still ran at step 0 and computed 0 / 0, which "
                       "raises ZeroDivisionError (a test like step <= warmup_steps, or a warmup factor computed "
                       "unconditionally, does this). With no warmup the first update should already get the "
                       "peak multiplier 1.",
        "hint": "Enter the warmup branch only when step < warmup_steps (strictly): it is then never empty.",
    },
    {
        "slug": "integer-division",
        "name": "integer division in the warmup (step // warmup)",
        "impl": integer_division,
        "explanation": "step // warmup_steps is floor division: it is 0 for every warmup step, so the "
                       "learning rate stays at 0 for the whole warmup and then jumps to the peak. Warmup is "
                       "supposed to be a linear ramp, which needs true division.",
        "hint": "Use step / warmup_steps (true division).",
    },
]
