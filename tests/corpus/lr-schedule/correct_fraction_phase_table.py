# expect: passed
# source: independent answer: a table of (phase test, formula) pairs tried in order; the warmup in exact fractions
from fractions import Fraction
import math

_PHASES = (
    (lambda s, w, t: s < w, lambda s, w, t, r: float(Fraction(s, w))),
    (lambda s, w, t: s >= t, lambda s, w, t, r: float(r)),
    (lambda s, w, t: True,
     lambda s, w, t, r: r + (1 - r) * 0.5 * (1 + math.cos(math.pi * Fraction(s - w, t - w)))),
)


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    for applies, formula in _PHASES:
        if applies(step, warmup_steps, total_steps):
            return formula(step, warmup_steps, total_steps, min_ratio)
