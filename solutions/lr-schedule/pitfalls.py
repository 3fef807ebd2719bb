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


def cosine_over_total_cut_at_end(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    if step > total_steps:
        return min_ratio  # an explicit floor branch (nanoGPT's shape), so the curve jumps down after total_steps
    progress = (step - warmup_steps) / total_steps  # should be total - warmup
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


def nanogpt_warmup(step, warmup_steps, total_steps, min_ratio=0.0):
    # nanoGPT's get_lr: learning_rate * (it + 1) / (warmup_iters + 1), then the same cosine
    if step < warmup_steps:
        return (step + 1) / (warmup_steps + 1)
    return _decay(step, warmup_steps, total_steps, min_ratio)


def timm_without_warmup_prefix(step, warmup_steps, total_steps, min_ratio=0.0):
    # timm's CosineLRScheduler(t_initial=total, warmup_t=warmup, warmup_prefix=False): the warmup
    # line overrides the start of a cosine that is measured from step 0 over t_initial steps
    if step < warmup_steps:
        return step / warmup_steps
    if step >= total_steps:  # the cycle is over (cycle_limit = 1): lr_min
        return min_ratio
    return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * step / total_steps))


def hf_cosine_with_warmup(step, warmup_steps, total_steps, min_ratio=0.0):
    # transformers' get_cosine_schedule_with_warmup (num_cycles = 0.5): no floor, no clamp
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * 2.0 * 0.5 * progress)))


def hf_cosine_lr_rate(step, warmup_steps, total_steps, min_ratio=0.0):
    # transformers' get_cosine_with_min_lr_schedule_with_warmup_lr_rate (warmup_lr_rate=None):
    # step + 1 in the warmup and in the progress, a floor, and no clamp past the end
    if step < warmup_steps:
        return (step + 1.0) / max(1.0, warmup_steps)
    progress = (step - warmup_steps + 1.0) / max(1.0, total_steps - warmup_steps)
    factor = 0.5 * (1.0 + math.cos(math.pi * 2.0 * 0.5 * progress))
    return max(0.0, factor * (1.0 - min_ratio) + min_ratio)


def fairseq_cosine(step, warmup_steps, total_steps, min_ratio=0.0):
    # fairseq's "cosine" scheduler (lr = min_lr, max_lr = peak, warmup_init_lr left at its default,
    # which is lr, lr_shrink = 0.1, t_mult = 1, period = max_update - warmup_updates)
    if step < warmup_steps:
        return min_ratio + step * (1.0 - min_ratio) / warmup_steps  # the warmup starts at the floor
    period = total_steps - warmup_steps
    cycle = (step - warmup_steps) // period  # past max_update a new, shrunk cycle starts
    t_curr = step - warmup_steps - cycle * period
    shrink = 0.1 ** cycle
    low, high = min_ratio * shrink, shrink
    return low + 0.5 * (high - low) * (1.0 + math.cos(math.pi * t_curr / period))


def min_ratio_default_tenth(step, warmup_steps, total_steps, min_ratio=0.1):
    return _correct(step, warmup_steps, total_steps, min_ratio)


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
                       "updates were numbered from 1 (transformers' "
                       "get_cosine_with_min_lr_schedule_with_warmup_lr_rate does this too, in both its warmup "
                       "and its decay, but it also leaves the progress unclamped). LambdaLR calls the function "
                       "with 0 for the first update, 1 for the second, and so on, so step 0 must give 0 and the "
                       "floor must be reached exactly at step == total_steps.",
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
        "slug": "cosine-over-total-cut",
        "name": "cosine over total_steps, then a jump to the floor after total_steps",
        "impl": cosine_over_total_cut_at_end,
        "explanation": "Progress was measured as (step - warmup_steps) / total_steps, and every step after "
                       "total_steps returns min_ratio (an explicit 'past the end' branch, shaped like "
                       "nanoGPT's get_lr). The decay only lasts total_steps - warmup_steps updates, so with "
                       "that denominator the cosine is still well above the floor at total_steps and the "
                       "learning rate then drops to min_ratio in a single update (with warmup 4 of 12 and "
                       "floor 0.1: 0.325 at step 12, then 0.1). The cosine should reach the floor smoothly, "
                       "exactly at total_steps.",
        "hint": "Divide by the length of the decay: total_steps - warmup_steps.",
    },
    {
        "slug": "progress-not-clamped",
        "name": "progress not clamped past total_steps (LR rises again)",
        "impl": progress_not_clamped,
        "explanation": "Past total_steps the progress goes above 1 and cos keeps oscillating, so the learning "
                       "rate climbs back up towards the peak (at progress 2 it is max_lr again). Training "
                       "that runs a few extra steps, or a resumed run, would suddenly get a large learning "
                       "rate. The schedule must stay on the floor once it gets there. (This is exactly "
                       "transformers' get_cosine_with_min_lr_schedule_with_warmup, whose num_cycles lets the "
                       "cosine go on by design; this exercise has no cycles.)",
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
    {
        "slug": "nanogpt-warmup",
        "name": "nanoGPT's warmup: (step + 1) / (warmup_steps + 1)",
        "library": "nanoGPT",
        "convention": True,
        "impl": nanogpt_warmup,
        "explanation": "Your warmup is nanoGPT's: get_lr in its train.py returns "
                       "learning_rate * (it + 1) / (warmup_iters + 1), so update 0 already trains at "
                       "max_lr / (warmup_steps + 1) and the ramp never quite reaches the peak before the "
                       "cosine takes over at step warmup_steps. The rest of nanoGPT's schedule (the cosine over "
                       "the decay's own length, min_lr from then on) is what this exercise asks. Here the "
                       "warmup is step / warmup_steps: 0 at step 0, 0.5 at step 2 of 4 (nanoGPT gives 3/5 = "
                       "0.6), and exactly 1 at step == warmup_steps.",
        "hint": "Return step / warmup_steps during warmup: no + 1 on either side.",
    },
    {
        "slug": "timm-no-warmup-prefix",
        "name": "cosine measured from step 0 (timm without warmup_prefix)",
        "library": "timm",
        "convention": True,
        "impl": timm_without_warmup_prefix,
        "explanation": "Your cosine starts at step 0 and runs over total_steps, and the warmup line only "
                       "replaces its first warmup_steps values. That is timm's CosineLRScheduler with its "
                       "default warmup_prefix=False: progress is step / t_initial, so at the end of the warmup "
                       "the learning rate drops from the top of the ramp onto a cosine that has already "
                       "decayed (with warmup 4 of 12 and floor 0.1, step 4 gives 0.775, not 1). This "
                       "exercise is timm's warmup_prefix=True: the cosine starts at the peak at step "
                       "warmup_steps, with progress = (step - warmup_steps) / (total_steps - warmup_steps).",
        "hint": "Measure progress from the end of the warmup: (step - warmup_steps) / (total_steps - warmup_steps).",
    },
    {
        "slug": "hf-cosine",
        "name": "no floor and no clamp (transformers' get_cosine_schedule_with_warmup)",
        "library": "Hugging Face transformers",
        "convention": True,
        "impl": hf_cosine_with_warmup,
        "explanation": "Your schedule is transformers' get_cosine_schedule_with_warmup: its lambda decays to 0 "
                       "(it has no floor, so min_ratio is never used) and never clamps the progress, so past "
                       "num_training_steps the half cosine carries on and the learning rate climbs back up "
                       "(num_cycles = 0.5 is one half-wave; more cycles are a feature there). This exercise "
                       "asks for a floor, min_ratio + (1 - min_ratio) * cosine, and for the floor to hold for "
                       "every step after total_steps.",
        "hint": "Rescale the cosine into [min_ratio, 1] and clamp progress with min(1.0, progress).",
    },
    {
        "slug": "hf-cosine-lr-rate",
        "name": "every value one update early, no clamp (transformers' ..._warmup_lr_rate)",
        "library": "Hugging Face transformers",
        "convention": True,
        "impl": hf_cosine_lr_rate,
        "explanation": "Your schedule is transformers' get_cosine_with_min_lr_schedule_with_warmup_lr_rate: it "
                       "adds 1 to the step in the warmup ((step + 1) / warmup_steps) and in the decay "
                       "((step - warmup_steps + 1) / (total_steps - warmup_steps)), so every value arrives one "
                       "update early and the floor is reached at total_steps - 1; and, like HF's other cosine "
                       "lambdas, it does not clamp the progress, so past the end the learning rate rises "
                       "again. This exercise numbers updates from 0 (step 0 gives 0, the floor arrives at "
                       "step == total_steps) and holds the floor for ever after.",
        "hint": "Use step as given (no + 1) and clamp progress with min(1.0, progress).",
    },
    {
        "slug": "fairseq-cosine",
        "name": "warmup from the floor, restart after the end (fairseq's cosine)",
        "library": "fairseq",
        "convention": True,
        "impl": fairseq_cosine,
        "explanation": "Your schedule is fairseq's cosine scheduler with its defaults: the warmup starts from "
                       "min_lr (warmup_init_lr defaults to lr, the floor) instead of 0, and when the period "
                       "(max_update - warmup_updates) is over a new cycle starts at a peak shrunk by "
                       "lr_shrink = 0.1, so at step == total_steps the multiplier jumps to 0.1 instead of "
                       "staying at min_ratio. This exercise warms up from 0 (step / warmup_steps) and holds "
                       "min_ratio for every step after total_steps.",
        "hint": "Start the warmup at 0, and clamp progress to 1 instead of starting a new cycle.",
    },
    {
        "slug": "default-min-ratio",
        "name": "min_ratio defaults to something other than 0",
        "impl": min_ratio_default_tenth,
        "explanation": "Called without min_ratio, your schedule decayed to a floor of 0.1 instead of 0: the "
                       "default in the signature is not 0.0. A floor of 10% of max_lr is a common choice "
                       "in training scripts, but as a default it changes every run that does not pass "
                       "min_ratio: the contract here is lr_multiplier(step, warmup_steps, total_steps, "
                       "min_ratio=0.0).",
        "hint": "Keep the signature lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0).",
    },
]

# Warmup mistakes and decay mistakes live in different phases, so any two of them combine: the
# first one's warmup, the second one's decay (pairs run together so code that makes both is named
# with both: the runner reads COMBINE and builds each pair with combine(a, b)).
_WARMUP_MISTAKES = {"warmup-off-by-one": warmup_plus_one, "integer-division": integer_division,
                    "nanogpt-warmup": nanogpt_warmup}
_DECAY_MISTAKES = {"decays-to-zero": decays_to_zero, "floor-by-clamping": floor_by_clamping,
                   "cosine-over-total": cosine_over_total, "cosine-over-total-cut": cosine_over_total_cut_at_end,
                   "progress-not-clamped": progress_not_clamped}


def combine(a, b):
    warm, decay = _WARMUP_MISTAKES.get(a), _DECAY_MISTAKES.get(b)
    if warm is None or decay is None:
        return None

    def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
        phase = warm if step < warmup_steps else decay
        return phase(step, warmup_steps, total_steps, min_ratio)

    return lr_multiplier


COMBINE = [(a, b) for a in _WARMUP_MISTAKES for b in _DECAY_MISTAKES]
