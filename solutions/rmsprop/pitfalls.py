"""Known-wrong RMSprop variants. Each is a whole optimizer a learner could plausibly write; the
judge must name it when it sees it.

Every pitfall is a *delta* (grind_kit.Deltas): the methods it overrides in ``_Base``, one correct
RMSprop cut into the pieces a mistake changes. Two deltas that override different methods
compose into one optimizer making both mistakes: ``combine("mean-square-starts-at-one",
"eps-inside-sqrt")`` is a faithful port of TensorFlow 1's RMSPropOptimizer, and grind names a
submission that makes both by running that pair. Pitfalls that are a real library's convention
rather than a slip carry ``"library"`` and ``"convention": True``, and their explanation says how
that library differs from torch.optim.RMSprop."""

import torch

from grind_kit import Deltas, OptimizerPlumbing, plumbing_pitfalls


class _Base(OptimizerPlumbing):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False):
        self.params = self._keep(params)
        self.lr, self.alpha, self.eps = lr, alpha, eps
        self.weight_decay, self.momentum, self.centered = weight_decay, momentum, centered
        self.state = {}

    # --- the pieces a mistake changes -------------------------------------------------------
    def _init_square(self, p):
        return torch.zeros_like(p)

    def _decay(self, p, g):
        return g + self.weight_decay * p if self.weight_decay else g

    def _square(self, state, g):
        state["square_avg"].mul_(self.alpha).addcmul_(g, g, value=1 - self.alpha)

    def _mean(self, state, g):
        if self.centered:
            state["grad_avg"].mul_(self.alpha).add_(g, alpha=1 - self.alpha)

    def _denominator(self, state, g):
        s = state["square_avg"]
        if self.centered:
            s = s - state["grad_avg"] * state["grad_avg"]
        return s.sqrt() + self.eps

    def _update(self, p, state, g, denom):
        if self.momentum > 0:
            state["buf"].mul_(self.momentum).add_(g / denom)
            p.sub_(self.lr * state["buf"])
        else:
            p.sub_(self.lr * g / denom)

    @torch.no_grad()
    def step(self):
        for p in self.params:
            g = self._grad(p)
            if g is None:
                continue
            state = self.state.get(id(p))
            if state is None:
                state = self.state[id(p)] = {"t": 0, "square_avg": self._init_square(p),
                                             "grad_avg": torch.zeros_like(p), "buf": torch.zeros_like(p)}
            state["t"] += 1
            g = self._decay(p, g)
            self._square(state, g)
            self._mean(state, g)
            self._update(p, state, g, self._denominator(state, g))


MISTAKES = Deltas.on_class(_Base, "RMSprop")  # each impl is {"RMSprop": a subclass of _Base}
# Which pairs grind runs together to name a submission that makes two mistakes at once: every
# pair whose deltas override different methods (combine() skips the others).
COMBINE = "all"
combine = MISTAKES.combine


# --- the mistakes ------------------------------------------------------------------------------

def _eps_inside_sqrt(self, state, g):
    s = state["square_avg"]
    if self.centered:
        s = s - state["grad_avg"] * state["grad_avg"]
    return (s + self.eps).sqrt()


def _no_sqrt(self, state, g):
    s = state["square_avg"]
    if self.centered:
        s = s - state["grad_avg"] * state["grad_avg"]
    return s + self.eps  # divides by the mean square itself, not its root


def _square_without_one_minus_alpha(self, state, g):
    state["square_avg"].mul_(self.alpha).addcmul_(g, g)  # a decaying sum, not a mean


def _square_alpha_swapped(self, state, g):
    state["square_avg"].mul_(1 - self.alpha).addcmul_(g, g, value=self.alpha)


def _bias_corrected(self, state, g):
    s = state["square_avg"]
    if self.centered:
        s = s - state["grad_avg"] * state["grad_avg"]
    return (s / (1 - self.alpha ** state["t"])).sqrt() + self.eps


def _centered_ignored(self, state, g):
    return state["square_avg"].sqrt() + self.eps


def _centered_minus_grad_squared(self, state, g):
    s = state["square_avg"]
    if self.centered:
        s = s - g * g  # this step's gradient, not the running mean: negative, so NaN
    return s.sqrt() + self.eps


def _momentum_on_gradient(self, p, state, g, denom):
    if self.momentum > 0:
        state["buf"].mul_(self.momentum).add_(g)  # a velocity of raw gradients, normalised afterwards
        p.sub_(self.lr * state["buf"] / denom)
    else:
        p.sub_(self.lr * g / denom)


def _momentum_ema(self, p, state, g, denom):
    if self.momentum > 0:
        state["buf"].mul_(self.momentum).add_(g / denom, alpha=1 - self.momentum)
        p.sub_(self.lr * state["buf"])
    else:
        p.sub_(self.lr * g / denom)


def _init_square_ones(self, p):
    return torch.ones_like(p)


def _decay_decoupled(self, p, g):
    if self.weight_decay:
        p.mul_(1 - self.lr * self.weight_decay)
    return g


def _decay_ignored(self, p, g):
    return g


def _none_as_zero(self, p):
    return torch.zeros_like(p) if p.grad is None else p.grad


def _averages_start_at_first_sample(self, state, g):
    if state["t"] == 1:
        state["square_avg"].copy_(g * g)  # seeded with the first sample instead of decaying from zero
    else:
        state["square_avg"].mul_(self.alpha).addcmul_(g, g, value=1 - self.alpha)


def _mean_starts_at_first_sample(self, state, g):
    if self.centered:
        if state["t"] == 1:
            state["grad_avg"].copy_(g)
        else:
            state["grad_avg"].mul_(self.alpha).add_(g, alpha=1 - self.alpha)


def _decay_in_numerator_only(self, p, state, g, denom):
    g = g + self.weight_decay * p if self.weight_decay else g  # the averages above saw the raw gradient
    if self.momentum > 0:
        state["buf"].mul_(self.momentum).add_(g / denom)
        p.sub_(self.lr * state["buf"])
    else:
        p.sub_(self.lr * g / denom)


def _keras_defaults(self, params, lr=1e-3, alpha=0.9, eps=1e-7, weight_decay=0, momentum=0, centered=False):
    _Base.__init__(self, params, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                   centered=centered)


def _zero_grad_skipped(self, p):
    return None if p.grad is None or not bool(p.grad.any()) else p.grad


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "eps-inside-sqrt",
        "name": "eps inside the square root",
        "delta": {"_denominator": _eps_inside_sqrt},
        "library": "Keras 3 (keras.optimizers.RMSprop)",
        "convention": True,
        "explanation": "The denominator was sqrt(mean_square + eps) instead of sqrt(mean_square) + eps. Keras 3's "
                       "RMSprop (and TensorFlow 1's, with its epsilon of 1e-10) does exactly this, so it is a real "
                       "convention as well as a common slip. For ordinary gradients the two agree, but for a "
                       "gradient of 1e-10 the root of the mean square is about 1e-11: torch divides by about "
                       "1e-8 and moves the parameter by about lr / 100, while sqrt(1e-11**2 + 1e-8) = 1e-4 moves it "
                       "ten thousand times less. torch.optim.RMSprop adds eps after the square root.",
        "hint": "The denominator is mean_square.sqrt() + eps.",
    },
    {
        "slug": "no-one-minus-alpha",
        "name": "the new squared gradient not weighted by (1 - alpha)",
        "delta": {"_square": _square_without_one_minus_alpha},
        "explanation": "The mean square was updated as alpha * s + g**2, without the (1 - alpha) on the new term. "
                       "That is a decaying sum, not a running mean: it is exactly 1 / (1 - alpha) times torch's mean "
                       "square, so with alpha = 0.99 every step is 10 times too small (the first one is lr instead "
                       "of 10 lr) and the sum settles near 100 g**2 instead of g**2. torch keeps "
                       "s = alpha * s + (1 - alpha) * g**2.",
        "hint": "square_avg = alpha * square_avg + (1 - alpha) * g * g.",
    },
    {
        "slug": "alpha-swapped",
        "name": "alpha weighting the new squared gradient",
        "delta": {"_square": _square_alpha_swapped},
        "explanation": "The mean square was updated as (1 - alpha) * s + alpha * g**2: alpha went to the new "
                       "gradient instead of the history. With alpha = 0.99 the 'average' is just the last "
                       "gradient squared, so every step is about lr * sign(g) and the smoothing that gives RMSprop "
                       "its name is gone. In torch alpha is the decay: the old average keeps alpha, the new "
                       "square gets 1 - alpha.",
        "hint": "square_avg = alpha * square_avg + (1 - alpha) * g * g: alpha multiplies the old value.",
    },
    {
        "slug": "adam-bias-correction",
        "name": "Adam's bias correction added to RMSprop",
        "delta": {"_denominator": _bias_corrected},
        "explanation": "The mean square was divided by 1 - alpha**t before the square root, as Adam does with its "
                       "second moment. torch's RMSprop has no bias correction: the mean square starts at zero and "
                       "is used as it is, which is why its first steps are large (10 lr on the first step with "
                       "alpha = 0.99, then 7.09 lr, 5.80 lr for a constant gradient) and shrink toward lr as the "
                       "average fills up.",
        "hint": "Divide by sqrt(square_avg) + eps, with no 1 - alpha**t anywhere.",
    },
    {
        "slug": "no-square-root",
        "name": "divided by the mean square, not its root",
        "delta": {"_denominator": _no_sqrt},
        "explanation": "The gradient was divided by the mean square itself (plus eps) rather than by its square "
                       "root. The update is then about lr / g instead of about lr * sign(g): huge for small "
                       "gradients and tiny for large ones, the opposite of a normalised step. RMSprop divides by "
                       "the root mean square, sqrt(square_avg) + eps.",
        "hint": "Take the square root of the mean square before adding eps and dividing.",
    },
    {
        "slug": "centered-ignored",
        "name": "centered without the squared mean",
        "delta": {"_denominator": _centered_ignored},
        "explanation": "With centered=True the denominator was still sqrt(mean_square): nothing was subtracted, so "
                       "the option changed nothing. The centered variant normalises by an estimate of the "
                       "gradient's variance, E[g^2] - E[g]^2: it keeps a running mean of g with the same alpha and "
                       "divides by sqrt(square_avg - grad_avg**2) + eps, which is smaller, so its steps are larger.",
        "hint": "Keep grad_avg = alpha * grad_avg + (1 - alpha) * g and use sqrt(square_avg - grad_avg**2) + eps.",
    },
    {
        "slug": "centered-minus-grad-squared",
        "name": "centered subtracting this step's g**2 (NaN)",
        "delta": {"_denominator": _centered_minus_grad_squared},
        "explanation": "The centered denominator subtracted the square of this step's gradient instead of the square "
                       "of the running mean of gradients. The mean square holds only (1 - alpha) * g**2 of the "
                       "new gradient, so mean_square - g**2 is negative and its square root is NaN from the first "
                       "step. The variance estimate needs a second running average, grad_avg = alpha * grad_avg + "
                       "(1 - alpha) * g, and subtracts grad_avg**2.",
        "hint": "Subtract grad_avg**2, where grad_avg is a running mean of g with the same alpha.",
    },
    {
        "slug": "momentum-on-gradient",
        "name": "momentum applied to the gradient instead of the normalised step",
        "delta": {"_update": _momentum_on_gradient},
        "explanation": "The velocity accumulated raw gradients, buf = momentum * buf + g, and was divided by the "
                       "root mean square afterwards. torch's velocity accumulates the normalised steps, buf = "
                       "momentum * buf + g / (sqrt(square_avg) + eps), then moves p by lr * buf. The two differ "
                       "from the second step on: old gradients get divided by today's denominator instead of the "
                       "one they were normalised with.",
        "hint": "Put g / denom into the velocity: buf = momentum * buf + g / denom, then p -= lr * buf.",
    },
    {
        "slug": "momentum-ema",
        "name": "momentum as an average (1 - momentum) weighted",
        "delta": {"_update": _momentum_ema},
        "explanation": "The velocity was a running average, buf = momentum * buf + (1 - momentum) * step, like "
                       "Adam's first moment. With momentum = 0.9 the first step is ten times too small and a "
                       "steady step builds up to 1 times its size instead of 10. torch's RMSprop adds the whole "
                       "normalised step: buf = momentum * buf + g / denom.",
        "hint": "No (1 - momentum) factor: buf = momentum * buf + g / denom.",
    },
    {
        "slug": "mean-square-starts-at-one",
        "name": "mean square started at 1 instead of 0",
        "delta": {"_init_square": _init_square_ones},
        "library": "TensorFlow 1 (tf.train.RMSPropOptimizer)",
        "convention": True,
        "explanation": "The mean square started at 1, which is TensorFlow 1's convention: tf.train.RMSPropOptimizer "
                       "creates its 'rms' slot filled with ones (timm's RMSpropTF copies it to reproduce TF "
                       "training runs). Early steps are then damped instead of inflated: after t steps the "
                       "mean square still holds alpha**t of that 1, so a gradient of 0.01 moves the parameter by "
                       "about lr * 0.01 at first rather than 10 lr, and the start-up lasts hundreds of steps with "
                       "alpha = 0.99. TF1 also puts eps inside the square root (default 1e-10) and folds lr into "
                       "the velocity (the same thing while lr is constant); a faithful port shows both. "
                       "torch.optim.RMSprop starts the mean square at zero.",
        "hint": "Start square_avg at torch.zeros_like(p).",
    },
    {
        "slug": "decoupled-weight-decay",
        "name": "weight decay applied to the weights directly",
        "delta": {"_decay": _decay_decoupled},
        "explanation": "The weights were shrunk directly, p *= 1 - lr * weight_decay, AdamW-style, and the gradient "
                       "left alone. torch.optim.RMSprop's weight_decay is an L2 penalty: weight_decay * p joins the "
                       "gradient before the mean square is updated, so it is normalised like the rest of the "
                       "gradient (and a parameter with a tiny gradient is pulled toward zero by about lr * sign(p) "
                       "per step, far more than lr * weight_decay * p).",
        "hint": "g = p.grad + weight_decay * p, then use this g everywhere.",
    },
    {
        "slug": "decay-ignored",
        "name": "weight decay ignored",
        "delta": {"_decay": _decay_ignored},
        "explanation": "weight_decay had no effect: the step used the gradient alone. torch adds weight_decay * p "
                       "to the gradient before anything else, so the mean square (and the velocity) see it too.",
        "hint": "g = p.grad + weight_decay * p at the start of each parameter's update.",
    },
    {
        "slug": "none-grad-as-zero",
        "name": "a missing gradient treated as zero",
        "delta": {"_grad": _none_as_zero},
        "explanation": "A parameter whose .grad is None was updated as if its gradient were zero: its mean square "
                       "decayed, and with momentum it kept coasting on its velocity. torch skips such a parameter "
                       "entirely: it does not move and none of its averages change.",
        "hint": "if p.grad is None: continue, before touching the parameter's state.",
    },
    {
        "slug": "averages-start-at-first-gradient",
        "name": "the mean square started at the first g**2 (a warm start)",
        "delta": {"_square": _averages_start_at_first_sample, "_mean": _mean_starts_at_first_sample},
        "explanation": "The running averages were seeded with their first sample (square_avg = g**2 and, when "
                       "centered, grad_avg = g on a parameter's first step) and decayed from there, a hand-written "
                       "'warm start' meant to avoid the large early steps. It is neither torch's zero start nor "
                       "Adam's bias correction: the first step is lr * sign(g) (not 10 lr), and from the second step "
                       "on the old gradient keeps weight alpha instead of alpha * (1 - alpha), so the two differ "
                       "whenever the gradient changes (under a constant gradient they agree with bias correction). "
                       "With centered=True the first variance is g**2 - g**2 = 0 and the step is g / eps. "
                       "torch.optim.RMSprop starts both averages at zero and updates them with weight 1 - alpha "
                       "from the very first step.",
        "hint": "Create square_avg (and grad_avg) with torch.zeros_like(p) and apply the same update on every step, "
                "the first included.",
    },
    {
        "slug": "decay-outside-the-average",
        "name": "weight decay added after the mean square",
        "delta": {"_decay": _decay_ignored, "_update": _decay_in_numerator_only},
        "explanation": "weight_decay * p was added to the gradient only in the numerator of the step: the mean "
                       "square (and the centered mean) were fed the raw gradient. torch adds the L2 term to the "
                       "gradient first, so the averages see g + weight_decay * p. The two differ wherever the decay "
                       "term is not small next to the gradient: a parameter with a tiny gradient is then divided "
                       "by eps instead of by the size of its own decay term, and jumps.",
        "hint": "g = p.grad + weight_decay * p before the averages are updated, and use that g everywhere.",
    },
    {
        "slug": "keras-defaults",
        "name": "Keras's RMSprop defaults (lr 1e-3, rho 0.9, epsilon 1e-7)",
        "delta": {"__init__": _keras_defaults},
        "library": "Keras (tf.keras.optimizers.RMSprop and Keras 3)",
        "convention": True,
        "explanation": "The constructor's defaults were Keras's, learning_rate=0.001, rho=0.9, epsilon=1e-7, "
                       "instead of torch's lr=0.01, alpha=0.99, eps=1e-8. Code ported from Keras keeps its "
                       "numbers: with the defaults every step is ten times smaller, the history is forgotten ten "
                       "times faster, and for gradients near 1e-8 eps dominates the denominator. Only calls "
                       "that rely on the defaults differ; the formula may be right.",
        "hint": "RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False).",
    },
    {
        "slug": "zero-grad-skipped",
        "name": "a zero gradient skipped like a missing one",
        "delta": {"_grad": _zero_grad_skipped},
        "explanation": "A parameter whose gradient was all zeros was skipped as if it had no gradient (a check "
                       "such as 'if p.grad is None or not p.grad.any()'). A zero gradient is a real gradient: "
                       "torch still decays the mean square, and with momentum the velocity keeps moving the "
                       "parameter by lr * momentum * buf on every such step. Only a .grad of None skips it.",
        "hint": "Skip a parameter only when p.grad is None; a gradient of zeros goes through the update.",
    },
    *plumbing_pitfalls("params-generator-consumed"),
])
