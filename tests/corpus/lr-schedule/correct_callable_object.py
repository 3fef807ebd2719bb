# expect: passed
# source: independent answer: lr_multiplier is an instance of a class with __call__, phases as methods, values memoised per argument tuple
import math


class _WarmupCosine:
    def __init__(self):
        self._memo = {}

    def _warmup(self, step, warmup):
        return step * (1.0 / warmup)

    def _cosine(self, step, warmup, total, floor):
        t = (step - warmup) / (total - warmup)
        t = 1.0 if t > 1.0 else t
        return floor + (1.0 - floor) * (1.0 + math.cos(math.pi * t)) / 2.0

    def __call__(self, step, warmup_steps, total_steps, min_ratio=0.0):
        key = (step, warmup_steps, total_steps, min_ratio)
        if key not in self._memo:
            if step < warmup_steps:
                self._memo[key] = self._warmup(step, warmup_steps)
            else:
                self._memo[key] = self._cosine(step, warmup_steps, total_steps, min_ratio)
        return self._memo[key]


lr_multiplier = _WarmupCosine()
