"""Known-wrong loss scalers. Each is a whole scaler a learner could plausibly write: one correct
skeleton, ``_Scaler``, whose pieces are the parts a mistake changes, and each pitfall its *delta*
(grind_kit.Deltas): the pieces it overrides, as in the other exercises' pitfalls. Two deltas that
change different pieces compose into one scaler making both mistakes (DeepSpeed's own scaler is
hysteresis plus one scale factor); two that change the same piece are alternatives."""

import torch

from grind_kit import Deltas


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
            self._on_overflow()
        else:
            self._on_clean()
        self.found_inf = None

    # --- the pieces of update() a mistake changes ---------------------------------------------
    def _on_overflow(self):
        self._back_off()
        self.tracker = 0

    def _back_off(self):
        self.scale_value *= self.backoff_factor

    def _on_clean(self):
        self.tracker += 1
        if self._interval_done():
            self._grow()

    def _interval_done(self):
        return self.tracker == self.growth_interval

    def _grow(self):
        self.scale_value *= self.growth_factor
        self.tracker = 0

    def get_scale(self):
        return self.scale_value


MISTAKES = Deltas.on_class(_Scaler, "LossScaler")


# --- the mistakes --------------------------------------------------------------------------------

def _back_off_only(self):
    self._back_off()                                   # backs off, but the clean count survives


def _count_the_skipped_step(self):
    self._back_off()
    self.tracker = 1                                   # the skipped step counts as a clean one


def _at_or_past_interval(self):
    return self.tracker >= self.growth_interval


def _step_on_overflow(self, optimizer):
    if self.found_inf is None:
        self.unscale_(optimizer)
    optimizer.step()                                   # the inf/NaN gradients reach the weights


def _inf_only(self, grad):
    return bool(torch.isinf(grad).any())               # NaN is not inf: it slips through


def _grow_without_reset(self):
    self.scale_value *= self.growth_factor             # never reset: grows on every later step


def _check_before_counting(self):
    if self.tracker == self.growth_interval:           # checked before counting this step
        self._grow()
    self.tracker += 1                                  # so every growth lands one update late


def _past_interval(self):
    return self.tracker > self.growth_interval         # > instead of ==: interval + 1 clean steps each time


# DeepSpeed's DynamicLossScaler with its usual hysteresis of 2 (delayed_shift=2): the "hysteresis"
# class attribute is the allowance every instance starts with.
def _hysteresis_overflow(self):
    if self.hysteresis == 1:
        self._back_off()
    else:
        self.hysteresis -= 1                           # the first overflow only uses up the hysteresis
    self.tracker = 0


def _grow_restoring_hysteresis(self):
    self.scale_value *= self.growth_factor
    self.tracker = 0
    self.hysteresis = 2                                # restored only when the scale grows


def _divide_by_growth_factor(self):
    """DeepSpeed's and fairseq's scalers have one scale_factor: multiply to grow, divide to back off."""
    self.scale_value /= self.growth_factor


def _halve(self):
    """apex.amp's LossScaler.update_scale: always / 2 and * 2, whatever the factors."""
    self.scale_value /= 2.0


def _double(self):
    self.scale_value *= 2.0
    self.tracker = 0


def _init_capped(self, *args, **kwargs):
    """apex.amp's LossScaler: max_loss_scale = 2**24, for the initial scale and for every growth."""
    _Scaler.__init__(self, *args, **kwargs)
    self.scale_value = min(self.scale_value, 2.0 ** 24)


def _update_capped(self):
    _Scaler.update(self)
    self.scale_value = min(self.scale_value, 2.0 ** 24)


def _divide_until_overflow(self, optimizer):
    found = False
    for g in self._grads(optimizer):
        g.div_(self.scale_value)
        if self._non_finite(g):
            found = True
            break                                      # "no need to look further": the rest stay scaled
    self.found_inf = found
    return found


def _check_then_divide_until_overflow(self, optimizer):
    """apex.amp's unscale_python: the overflow check comes first, and the loop breaks on it, so
    neither the bad tensor nor any after it are unscaled."""
    found = False
    for g in self._grads(optimizer):
        if self._non_finite(g):
            found = True
            break
        g.div_(self.scale_value)
    self.found_inf = found
    return found


def _unscale_again(self, optimizer):
    self.unscale_(optimizer)                           # divides again after an explicit unscale_
    if not self.found_inf:
        optimizer.step()


def _check_without_unscaling(self, optimizer):
    if self.found_inf is None:                         # checks for inf but leaves the grads scaled
        self.found_inf = any(self._non_finite(g) for g in self._grads(optimizer))
    if not self.found_inf:
        optimizer.step()


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "no-reset-on-overflow",
        "name": "clean-step count not reset on overflow",
        "delta": {"_on_overflow": _back_off_only},
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
        "delta": {"_on_overflow": _count_the_skipped_step, "_interval_done": _at_or_past_interval},
        "explanation": "The counter was reset on overflow but then incremented on every update(), so the "
                       "overflow step itself counted as the first clean step and the scale grew one step "
                       "early. A skipped step never counts towards growth: after an overflow the counter "
                       "must be 0, not 1.",
        "hint": "Increment the clean-step counter only in the branch where no inf/NaN was found.",
    },
    {
        "slug": "step-on-overflow",
        "name": "optimizer step taken on overflow",
        "delta": {"step": _step_on_overflow},
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
        "delta": {"_non_finite": _inf_only},
        "explanation": "The check looked for infinities only. A NaN gradient (from inf - inf or 0 * inf in "
                       "the backward pass) is not an infinity, so the step was taken with NaN and the scale "
                       "kept growing. Overflow means any non-finite value.",
        "hint": "Use torch.isfinite(g).all() (False for +inf, -inf and NaN) instead of torch.isinf.",
    },
    {
        "slug": "grow-every-step",
        "name": "growth on every step after the first interval",
        "delta": {"_interval_done": _at_or_past_interval, "_grow": _grow_without_reset},
        "explanation": "The scale grew correctly once growth_interval clean steps had passed, but the "
                       "counter was not reset afterwards, so it stayed at or above the interval and the "
                       "scale grew again on every following clean step until the next overflow. After "
                       "growing, a new run of growth_interval clean steps is needed.",
        "hint": "Set the clean-step counter back to 0 right after multiplying by growth_factor.",
    },
    {
        "slug": "late-growth",
        "name": "growth one step late",
        "delta": {"_on_clean": _check_before_counting},
        "explanation": "The count was compared with growth_interval before the current clean step was "
                       "counted, so every growth happened one update after the one that completed the interval. "
                       "GradScaler grows in the update() of the growth_interval-th consecutive clean step: with "
                       "interval 3 and no overflow, the scale grows after steps 2, 5, 8, ..., not 3, 6, 9.",
        "hint": "Count the current clean step first, then compare the count with growth_interval.",
    },
    {
        "slug": "growth-interval-plus-one",
        "name": "growth every growth_interval + 1 clean steps",
        "delta": {"_interval_done": _past_interval},
        "explanation": "The scale grew only once the count of clean steps went past growth_interval (a > where "
                       "== or >= belongs, or a growth step that is not counted), so each growth needed "
                       "growth_interval + 1 clean steps: with interval 3 and no overflow the scale grew after "
                       "steps 3, 7, 11 instead of 2, 5, 8, and the error grows with every interval. GradScaler "
                       "grows in the update() of the growth_interval-th consecutive clean step.",
        "hint": "Grow when the count equals growth_interval, counting the step that completes it.",
    },
    {
        "slug": "hysteresis",
        "name": "the first overflow does not back off (DeepSpeed's hysteresis)",
        "library": "DeepSpeed",
        "convention": True,
        "delta": {"hysteresis": 2, "_on_overflow": _hysteresis_overflow, "_grow": _grow_restoring_hysteresis},
        "explanation": "Your scaler skipped the step on an overflow but kept the scale, and only backed off on "
                       "the next overflow. That is DeepSpeed's hysteresis (the fp16 config's \"hysteresis\": 2, "
                       "delayed_shift in its DynamicLossScaler): each overflow uses up one unit, the scale "
                       "shrinks only when none is left, and the allowance comes back only when the scale grows. "
                       "GradScaler has no hysteresis: every overflow multiplies the scale by backoff_factor "
                       "(in the worked example, 2048 drops to 1024 at step 5).",
        "hint": "In update(), multiply by backoff_factor on every overflow.",
    },
    {
        "slug": "single-scale-factor",
        "name": "backing off by 1 / growth_factor (one scale_factor, as in DeepSpeed and fairseq)",
        "library": "DeepSpeed, fairseq",
        "convention": True,
        "delta": {"_back_off": _divide_by_growth_factor},
        "explanation": "Your scaler backed off by dividing by growth_factor, ignoring backoff_factor. DeepSpeed's "
                       "and fairseq's DynamicLossScaler have a single scale_factor (default 2): the scale is "
                       "multiplied by it to grow and divided by it to back off. GradScaler has two independent "
                       "factors: with growth_factor=3 and backoff_factor=0.25 an overflow takes a scale of 300 "
                       "to 75, not to 100.",
        "hint": "Multiply by backoff_factor on overflow; growth_factor is only for growing.",
    },
    {
        "slug": "fixed-factors",
        "name": "always x2 and /2, whatever the factors (apex's convention)",
        "library": "apex",
        "convention": True,
        "delta": {"_back_off": _halve, "_grow": _double},
        "explanation": "Your scaler doubled and halved the scale whatever growth_factor and backoff_factor said. "
                       "That is apex.amp's LossScaler: it accepts a scale_factor but its update_scale() "
                       "hard-codes / 2 on overflow and * 2 on growth. GradScaler uses the factors it is given: "
                       "with growth_factor=3 and backoff_factor=0.25, 100 grows to 300 and an overflow takes "
                       "300 to 75.",
        "hint": "Use self.growth_factor and self.backoff_factor, not 2 and 0.5.",
    },
    {
        "slug": "max-scale",
        "name": "the scale capped at 2**24 (apex's max_loss_scale)",
        "library": "apex",
        "convention": True,
        "delta": {"__init__": _init_capped, "update": _update_capped},
        "explanation": "Your scale stopped growing at 2**24 = 16777216. That is apex.amp's max_loss_scale "
                       "(default 2.**24, applied to the initial scale and to every growth). GradScaler has no "
                       "ceiling: after enough clean steps the scale keeps multiplying by growth_factor, and "
                       "only an overflow brings it down.",
        "hint": "Drop the upper bound: grow by growth_factor every growth_interval clean steps, without a min().",
    },
    {
        "slug": "unscale-stops-at-overflow",
        "name": "unscaling stopped at the first gradient with inf/NaN (apex's convention)",
        "library": "apex",
        "convention": True,
        "delta": {"unscale_": _check_then_divide_until_overflow},
        "explanation": "unscale_ stopped at the first gradient holding inf or NaN, so that gradient's finite "
                       "entries (and every gradient after it) stayed multiplied by the scale. apex.amp's Python "
                       "unscaler does this on purpose: it checks each tensor before dividing it and breaks out "
                       "of the loop on the first overflow, since that step is skipped anyway. Here, as in "
                       "GradScaler, unscale_ divides every gradient whatever it finds, so that whoever reads "
                       "them after unscale_ (to log or clip them) sees true gradients: in the worked example "
                       "step 5's gradient is [inf, 1], not [inf, 2048].",
        "hint": "Divide every gradient first (or keep dividing after a bad one), and only record that one was bad.",
    },
    {
        "slug": "unscale-stops-after-overflow",
        "name": "unscaling stopped after the first gradient with inf/NaN",
        "delta": {"unscale_": _divide_until_overflow},
        "explanation": "unscale_ returned (or broke out of its loop) as soon as a gradient held inf or NaN, so "
                       "every gradient after that one stayed multiplied by the scale. The step is skipped "
                       "anyway, but whoever reads the gradients after unscale_ (to log or clip them) sees "
                       "values thousands of times too large. GradScaler divides every gradient whatever it "
                       "finds, and only then reports the overflow.",
        "hint": "Finish the loop: divide every gradient and only record that one was bad.",
    },
    {
        "slug": "double-unscale",
        "name": "gradients unscaled twice",
        "delta": {"step": _unscale_again},
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
        "delta": {"step": _check_without_unscaling},
        "explanation": "When unscale_() had not been called, step() checked the gradients for inf/NaN but "
                       "did not divide them by the scale, so the optimizer applied gradients that were still "
                       "multiplied by the loss scale: updates thousands of times too large. step() has to "
                       "unscale by itself when the user did not.",
        "hint": "In step(), call unscale_(optimizer) when it has not been called since the last update().",
    },
])

# Pairs of known mistakes run together, so that code making both is named with both. Only this
# pair is asked for (the list is what grind runs, as before the deltas): DeepSpeed's own scaler,
# as its fp16 config sets it up, is hysteresis 2 *and* one scale_factor.
COMBINATIONS = [
    {"of": ["hysteresis", "single-scale-factor"], "impl": MISTAKES.combine("hysteresis", "single-scale-factor")},
]
