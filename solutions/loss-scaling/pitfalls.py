"""Known-wrong loss scalers. Each is a whole scaler a learner could plausibly write; they share
a correct skeleton and each overrides the one part it gets wrong."""

import torch


class _Scaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        self.scale_value = float(init_scale)
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = int(growth_interval)
        self.tracker = 0
        self.found_inf = None

    def scale(self, loss):
        return loss * self.scale_value

    def _grads(self, optimizer):
        return [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]

    def _non_finite(self, grad):
        return not bool(torch.isfinite(grad).all())

    def unscale_(self, optimizer):
        found = False
        for g in self._grads(optimizer):
            g.div_(self.scale_value)
            found = found or self._non_finite(g)
        self.found_inf = found
        return found

    def step(self, optimizer):
        if self.found_inf is None:
            self.unscale_(optimizer)
        if not self.found_inf:
            optimizer.step()

    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.tracker = 0
        else:
            self.tracker += 1
            if self.tracker == self.growth_interval:
                self.scale_value *= self.growth_factor
                self.tracker = 0
        self.found_inf = None

    def get_scale(self):
        return self.scale_value


class NoResetOnOverflow(_Scaler):
    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor   # backs off, but the clean count survives
        else:
            self.tracker += 1
            if self.tracker == self.growth_interval:
                self.scale_value *= self.growth_factor
                self.tracker = 0
        self.found_inf = None


class SkippedStepCounts(_Scaler):
    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.tracker = 0
        self.tracker += 1                              # the skipped step counts as a clean one
        if not self.found_inf and self.tracker >= self.growth_interval:
            self.scale_value *= self.growth_factor
            self.tracker = 0
        self.found_inf = None


class StepOnOverflow(_Scaler):
    def step(self, optimizer):
        if self.found_inf is None:
            self.unscale_(optimizer)
        optimizer.step()                               # the inf/NaN gradients reach the weights


class InfOnly(_Scaler):
    def _non_finite(self, grad):
        return bool(torch.isinf(grad).any())           # NaN is not inf: it slips through


class GrowEveryStep(_Scaler):
    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.tracker = 0
        else:
            self.tracker += 1
            if self.tracker >= self.growth_interval:   # never reset: grows on every later step
                self.scale_value *= self.growth_factor
        self.found_inf = None


class LateGrowth(_Scaler):
    def update(self):
        if self.found_inf:
            self.scale_value *= self.backoff_factor
            self.tracker = 0
        elif self.tracker >= self.growth_interval:     # checked before counting this step
            self.scale_value *= self.growth_factor
            self.tracker = 0
        else:
            self.tracker += 1
        self.found_inf = None


class DoubleUnscale(_Scaler):
    def step(self, optimizer):
        self.unscale_(optimizer)                       # divides again after an explicit unscale_
        if not self.found_inf:
            optimizer.step()


class StepDoesNotUnscale(_Scaler):
    def step(self, optimizer):
        if self.found_inf is None:                     # checks for inf but leaves the grads scaled
            self.found_inf = any(self._non_finite(g) for g in self._grads(optimizer))
        if not self.found_inf:
            optimizer.step()


PITFALLS = [
    {
        "slug": "no-reset-on-overflow",
        "name": "clean-step count not reset on overflow",
        "impl": {"LossScaler": NoResetOnOverflow},
        "explanation": "After an overflow the scale was backed off, but the count of clean steps kept its "
                       "value, so the next growth came too soon: two clean steps before an overflow and one "
                       "after already counted as three in a row. Growth needs growth_interval consecutive "
                       "clean steps, so an overflow has to start the count again from zero.",
        "hint": "In update(), set the clean-step counter to 0 in the same branch that multiplies by "
                "backoff_factor.",
    },
    {
        "slug": "skipped-step-counts",
        "name": "the skipped step counted as a clean one",
        "impl": {"LossScaler": SkippedStepCounts},
        "explanation": "The counter was reset on overflow but then incremented on every update(), so the "
                       "overflow step itself counted as the first clean step and the scale grew one step "
                       "early. A skipped step never counts towards growth: after an overflow the counter "
                       "must be 0, not 1.",
        "hint": "Increment the clean-step counter only in the branch where no inf/NaN was found.",
    },
    {
        "slug": "step-on-overflow",
        "name": "optimizer step taken on overflow",
        "impl": {"LossScaler": StepOnOverflow},
        "explanation": "optimizer.step() ran even when a gradient was inf or NaN, so the bad values went "
                       "straight into the weights and every later step computed with inf/NaN parameters. The "
                       "whole point of checking the gradients is to skip that update and only shrink the "
                       "scale.",
        "hint": "In step(), return without calling optimizer.step() when the unscaled gradients contain inf "
                "or NaN.",
    },
    {
        "slug": "inf-only",
        "name": "only inf detected, not NaN",
        "impl": {"LossScaler": InfOnly},
        "explanation": "The check looked for infinities only. A NaN gradient (from inf - inf or 0 * inf in "
                       "the backward pass) is not an infinity, so the step was taken with NaN and the scale "
                       "kept growing. Overflow means any non-finite value.",
        "hint": "Use torch.isfinite(g).all() (False for +inf, -inf and NaN) instead of torch.isinf.",
    },
    {
        "slug": "grow-every-step",
        "name": "growth on every step after the first interval",
        "impl": {"LossScaler": GrowEveryStep},
        "explanation": "The scale grew correctly once growth_interval clean steps had passed, but the "
                       "counter was not reset afterwards, so it stayed at or above the interval and the "
                       "scale grew again on every following clean step until the next overflow. After "
                       "growing, a new run of growth_interval clean steps is needed.",
        "hint": "Set the clean-step counter back to 0 right after multiplying by growth_factor.",
    },
    {
        "slug": "late-growth",
        "name": "growth one step late",
        "impl": {"LossScaler": LateGrowth},
        "explanation": "The interval was compared before counting the current clean step, so growth happened "
                       "only on the clean step after the one that completed the interval. GradScaler grows "
                       "in the update() of the growth_interval-th consecutive clean step: with interval 3 "
                       "and no overflow, the scale grows after the third step (step 2), not the fourth.",
        "hint": "Count the current clean step first, then compare the count with growth_interval.",
    },
    {
        "slug": "double-unscale",
        "name": "gradients unscaled twice",
        "impl": {"LossScaler": DoubleUnscale},
        "explanation": "step() always divided the gradients by the scale, even when unscale_() had already "
                       "done it for gradient clipping, so the optimizer saw gradients divided by the scale "
                       "squared. step() must unscale only if unscale_() was not called since the last "
                       "update().",
        "hint": "Remember in unscale_() that this iteration is unscaled, skip unscaling in step() when it "
                "is, and forget it in update().",
    },
    {
        "slug": "step-does-not-unscale",
        "name": "step() does not unscale",
        "impl": {"LossScaler": StepDoesNotUnscale},
        "explanation": "When unscale_() had not been called, step() checked the gradients for inf/NaN but "
                       "did not divide them by the scale, so the optimizer applied gradients that were still "
                       "multiplied by the loss scale: updates thousands of times too large. step() has to "
                       "unscale by itself when the user did not.",
        "hint": "In step(), call unscale_(optimizer) when it has not been called since the last update().",
    },
]
