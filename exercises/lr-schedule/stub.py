"""Learning-rate schedule: linear warmup, cosine decay, floor. Run `grind run lr-schedule` to check your answer."""

import math  # noqa: F401 - all you need; torch is not required


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    """The factor LambdaLR multiplies max_lr by at update number `step` (0 for the first update).

    step:         the update index, an int >= 0 (it may go past total_steps).
    warmup_steps: length of the linear warmup, an int >= 0 (0 means no warmup).
    total_steps:  the step at which the cosine reaches the floor, an int > warmup_steps.
    min_ratio:    the floor, as a fraction of max_lr (min_lr = min_ratio * max_lr).

    Returns a float: a straight line from 0 at step 0 up to 1 at warmup_steps, then a half
    cosine from 1 down to min_ratio over the steps warmup_steps..total_steps, then min_ratio for ever.
    """
    raise NotImplementedError("write lr_multiplier")
