"""Known-wrong Adam/AdamW variants. Each is a whole optimizer a learner could plausibly write;
the judge must name it when it sees it. A small configurable base keeps each mistake to the
few lines that differ from a correct implementation.

Every pitfall is a *delta* (grind_kit.Deltas): a dict of methods that override ``_Base`` (its
``"delta"`` key).
Two deltas that override different methods compose into one optimizer making both mistakes:
``combine("eps-before-correction", "decay-after-step")`` builds it (it is what Hugging Face's old
AdamW does), and returns None when both change the same method. Some pitfalls are a real
library's own convention rather than a slip: they carry ``"library"`` and ``"convention": True``,
and their explanation says how that library differs from torch.optim.Adam/AdamW."""

import math

import torch

from grind_kit import Deltas, OptimizerPlumbing, plumbing_pitfalls


class _Base(OptimizerPlumbing):
    decoupled = False
    default_wd = 0.0

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=None):
        self.params = self._keep(params)
        self.lr, self.eps = lr, eps
        self.weight_decay = self.default_wd if weight_decay is None else weight_decay
        self.beta1, self.beta2 = betas
        self.state = {}
        self.t = 0  # only the shared-counter variants use this

    # --- the pieces a mistake changes -------------------------------------------------------
    def _tick(self, state):
        state["t"] += 1
        return state["t"]

    def _begin_step(self):
        pass

    def _decay(self, p, g):
        if not self.weight_decay:
            return g
        if self.decoupled:
            p.mul_(1 - self.lr * self.weight_decay)
            return g
        return g + self.weight_decay * p

    def _moments(self, state, g):
        state["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
        state["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)

    def _update(self, state, t):
        m_hat = state["m"] / (1 - self.beta1 ** t)
        v_hat = state["v"] / (1 - self.beta2 ** t)
        return self.lr * m_hat / (v_hat.sqrt() + self.eps)

    def _apply(self, p, g, state, t):
        g = self._decay(p, g)
        self._moments(state, g)
        p.sub_(self._update(state, t))

    @torch.no_grad()
    def step(self):
        self._begin_step()
        for p in self._iter():
            if p.grad is None:
                continue
            state = self.state.setdefault(id(p), {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)})
            t = self._tick(state)
            self._apply(p, p.grad, state, t)


def pair(name, overrides):
    """Adam and AdamW classes sharing one mistake (or several)."""
    adam = type(f"{name}Adam", (_Base,), dict(overrides))
    adamw = type(f"{name}AdamW", (adam,), {"decoupled": True, "default_wd": 1e-2})
    return {"Adam": adam, "AdamW": adamw}


MISTAKES = Deltas(pair)

# Which pairs grind runs together to name a submission that makes two mistakes at once: every
# pair whose deltas override different methods (combine() skips the others).
COMBINE = "all"
combine = MISTAKES.combine


# --- the mistakes ------------------------------------------------------------------------------

def _no_bias_correction(self, state, t):
    return self.lr * state["m"] / (state["v"].sqrt() + self.eps)


def _eps_inside_sqrt(self, state, t):
    m_hat = state["m"] / (1 - self.beta1 ** t)
    v_hat = state["v"] / (1 - self.beta2 ** t)
    return self.lr * m_hat / (v_hat + self.eps).sqrt()


def _eps_before_correction(self, state, t):
    # the "efficient" form with eps added to the uncorrected sqrt(v)
    step_size = self.lr * math.sqrt(1 - self.beta2 ** t) / (1 - self.beta1 ** t)
    return step_size * state["m"] / (state["v"].sqrt() + self.eps)


def _tick_late(self, state):
    t = state["t"]  # used before it is incremented: 0 on the first step
    state["t"] += 1
    return t


def _update_tensor_math(self, state, t):
    m_hat = state["m"] / (1 - self.beta1 ** t)  # tensor / 0.0 -> inf, then inf / inf -> NaN
    v_hat = state["v"] / (1 - self.beta2 ** t)
    return self.lr * m_hat / (v_hat.sqrt() + self.eps)


def _update_float_math(self, state, t):
    step_size = self.lr / (1 - self.beta1 ** t)  # float / 0.0 raises ZeroDivisionError
    denom = state["v"].sqrt() / math.sqrt(1 - self.beta2 ** t) + self.eps
    return step_size * state["m"] / denom


def _tick_shared_per_parameter(self, state):
    self.t += 1  # one counter for the whole optimizer, bumped for every parameter visited
    return self.t


def _begin_step_global(self):
    self.t += 1  # one counter for the whole optimizer, bumped once per step()


def _tick_global(self, state):
    return self.t


def _moments_beta1_twice(self, state, g):
    state["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
    state["v"].mul_(self.beta1).addcmul_(g, g, value=1 - self.beta1)


def _decay_always_coupled(self, p, g):
    return g + self.weight_decay * p if self.weight_decay else g


def _decay_always_decoupled(self, p, g):
    if self.weight_decay:
        p.mul_(1 - self.lr * self.weight_decay)
    return g


def _decay_without_lr(self, p, g):
    if not self.weight_decay:
        return g
    if self.decoupled:
        p.mul_(1 - self.weight_decay)
        return g
    return g + self.weight_decay * p


def _apply_decay_after(self, p, g, state, t):
    if not self.decoupled:
        return _Base._apply(self, p, g, state, t)
    self._moments(state, g)
    p.sub_(self._update(state, t))
    p.mul_(1 - self.lr * self.weight_decay)  # shrinks the already-updated weights


def _zero_grad_rebinds(self):
    for p in self._iter():
        g = p.grad
        g = None  # rebinds the local name only; p.grad keeps its value  # noqa: F841


def _second_moment_uncorrected(self, state, t):
    m_hat = state["m"] / (1 - self.beta1 ** t)  # only the first moment is corrected
    return self.lr * m_hat / (state["v"].sqrt() + self.eps)


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "no-bias-correction",
        "name": "no bias correction",
        "delta": {"_update": _no_bias_correction},
        "explanation": "The update used the raw averages m and v. Both start at zero, so early on they are "
                       "far too small, v much more so than m: after one step m holds 10% of the gradient but v "
                       "only 0.1% of its square. The first step comes out about 3.16 times lr instead of lr, "
                       "and the error fades only after thousands of steps. Dividing by 1 - beta**t removes exactly this bias.",
        "hint": "Use m_hat = m / (1 - beta1**t) and v_hat = v / (1 - beta2**t) in the update.",
    },
    {
        "slug": "eps-inside-sqrt",
        "name": "eps inside the square root",
        "delta": {"_update": _eps_inside_sqrt},
        "explanation": "The denominator was sqrt(v_hat + eps). That is indistinguishable for ordinary "
                       "gradients, but for a gradient of 1e-10 it gives sqrt(1e-8) = 1e-4 instead of "
                       "1e-10 + 1e-8, so tiny gradients barely move their parameters. torch adds eps after "
                       "the square root.",
        "hint": "The denominator is v_hat.sqrt() + eps.",
    },
    {
        "slug": "eps-before-correction",
        "name": "eps added before bias correction",
        "delta": {"_update": _eps_before_correction},
        "library": "PyTorch before 1.6 (torch.optim.Adam and AdamW), TensorFlow/Keras Adam, labml.ai Adam",
        "convention": True,
        "explanation": "eps was added to sqrt(v) before the bias correction: the compact form "
                       "lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + eps) from the Adam paper, which "
                       "PyTorch used until 1.5, TensorFlow and Keras still use (their epsilon is this 'eps hat'), "
                       "and labml.ai uses with optimized_update=True. It equals torch's update with eps shrunk to "
                       "eps * sqrt(1 - beta2**t): about 30 times smaller on the first step with beta2 = 0.999, so "
                       "it matters as soon as gradients are near eps in size. torch.optim.Adam (since 1.6), which "
                       "this exercise asks for, corrects v first and adds eps to sqrt(v_hat).",
        "hint": "Compute v_hat = v / (1 - beta2**t) first, then divide by v_hat.sqrt() + eps.",
    },
    {
        "slug": "step-from-zero",
        "name": "step counter used before it is incremented (NaN)",
        "delta": {"_tick": _tick_late, "_update": _update_tensor_math},
        "explanation": "The bias correction used t = 0 on the first step, so it divided by 1 - beta**0 = 0: "
                       "the averages became inf and the update inf / inf = NaN. The step count must be "
                       "incremented before it is used, so the first update has t = 1.",
        "hint": "Increment the parameter's step count first, then compute 1 - beta**t.",
    },
    {
        "slug": "step-from-zero-raises",
        "name": "step counter used before it is incremented (division by zero)",
        "delta": {"_tick": _tick_late, "_update": _update_float_math},
        "explanation": "The bias correction used t = 0 on the first step, so 1 - beta**t was 0 and the "
                       "division raised ZeroDivisionError. The step count must be incremented before it is "
                       "used, so the first update has t = 1.",
        "hint": "Increment the parameter's step count first, then compute 1 - beta**t.",
    },
    {
        "slug": "counter-per-parameter",
        "name": "one step counter shared by all parameters",
        "delta": {"_tick": _tick_shared_per_parameter},
        "explanation": "A single counter was incremented once for every parameter processed, so with three "
                       "parameters the third one thinks it is at step 3 on the very first step and the bias "
                       "correction is wrong for all but the first. Each parameter keeps its own step count, "
                       "next to its own m and v.",
        "hint": "Store t in the parameter's state and increment it once per update of that parameter.",
    },
    {
        "slug": "counter-counts-skipped-steps",
        "name": "step count advances for parameters without a gradient",
        "delta": {"_begin_step": _begin_step_global, "_tick": _tick_global},
        "explanation": "The step count came from the number of step() calls, so a parameter that had no "
                       "gradient on some steps was bias-corrected as if it had been updated every time. A "
                       "parameter whose .grad is None is skipped entirely: no update, no change to m and v, "
                       "and its step count does not advance.",
        "hint": "Count updates per parameter, only when that parameter actually has a gradient.",
    },
    {
        "slug": "beta1-for-second-moment",
        "name": "beta1 used for the second moment",
        "delta": {"_moments": _moments_beta1_twice},
        "explanation": "The running average of g**2 used beta1 instead of beta2. The squared-gradient average "
                       "is meant to be long and slow (beta2 = 0.999, about 1000 steps of memory); with beta1 it "
                       "follows the last ten steps and no longer matches its own bias correction.",
        "hint": "m uses beta1; v = beta2 * v + (1 - beta2) * g * g.",
    },
    {
        "slug": "coupled-decay-in-adamw",
        "name": "AdamW adds the decay to the gradient",
        "delta": {"_decay": _decay_always_coupled},
        "explanation": "AdamW added weight_decay * p to the gradient, which is Adam's L2 penalty: the decay "
                       "then flows through m and v and gets divided by sqrt(v_hat), so parameters with large "
                       "gradients are barely decayed. AdamW's decay is decoupled: it shrinks the weights "
                       "directly, p *= 1 - lr * weight_decay, and never touches m or v.",
        "hint": "In AdamW leave the gradient alone and multiply p by (1 - lr * weight_decay) before the Adam step.",
    },
    {
        "slug": "decoupled-decay-in-adam",
        "name": "Adam decays the weights directly",
        "delta": {"_decay": _decay_always_decoupled},
        "library": "NVIDIA apex and DeepSpeed FusedAdam (adam_w_mode=True, their default)",
        "convention": True,
        "explanation": "Adam shrank the weights directly, p *= 1 - lr * weight_decay, which is AdamW's rule; "
                       "apex's and DeepSpeed's FusedAdam do exactly this by default (adam_w_mode=True), so their "
                       "'Adam' is torch's AdamW. torch.optim.Adam's weight_decay is an L2 penalty: weight_decay * p "
                       "is added to the gradient before m and v are updated, so it is also divided by "
                       "sqrt(v_hat).",
        "hint": "In Adam, g = g + weight_decay * p, then update m and v with that g.",
    },
    {
        "slug": "decay-without-lr",
        "name": "decoupled decay not scaled by lr",
        "delta": {"_decay": _decay_without_lr},
        "library": "labml.ai WeightDecay(absolute=True), TensorFlow Addons' decoupled weight decay",
        "convention": True,
        "explanation": "AdamW multiplied the weights by 1 - weight_decay instead of 1 - lr * weight_decay. "
                       "That is the 'absolute' decoupled decay of labml.ai's WeightDecay(absolute=True) and of "
                       "TensorFlow Addons (whose AdamW also adds eps before the bias correction), and the AdamW "
                       "paper's own form, where the decay follows only the schedule: weight_decay is a rate per "
                       "step. With weight_decay = 0.01 that removes 1% of every weight on every step, a hundred "
                       "times more than torch at lr = 0.01. In torch.optim.AdamW the decay is scaled by the "
                       "learning rate, so a schedule that lowers lr also lowers the decay.",
        "hint": "Multiply p by (1 - lr * weight_decay).",
    },
    {
        "slug": "decay-after-step",
        "name": "AdamW decays after the Adam step",
        "delta": {"_apply": _apply_decay_after},
        "explanation": "The decay was applied to the weights after the Adam update instead of before it, so "
                       "the update itself was shrunk too. The difference is lr * weight_decay times the "
                       "update, small per step but it adds up. torch computes p * (1 - lr * wd) first, then "
                       "subtracts the Adam step: p_new = p - lr * (wd * p + m_hat / (sqrt(v_hat) + eps)).",
        "hint": "Shrink p before subtracting the Adam update (or use the old p in lr * wd * p).",
    },
    {
        "slug": "zero-grad-rebinds-local",
        "name": "zero_grad that does not clear the gradients",
        "delta": {"zero_grad": _zero_grad_rebinds},
        "explanation": "zero_grad assigned None to a loop variable, which rebinds the local name and leaves "
                       "p.grad untouched. backward() adds into .grad, so gradients piled up across steps and "
                       "every update used the sum of all past gradients.",
        "hint": "Assign to the attribute: p.grad = None (or p.grad.zero_() when it is not None).",
    },
    *plumbing_pitfalls("params-generator-consumed", "zero-grad-on-none"),
    {
        "slug": "second-moment-uncorrected",
        "name": "only the first moment bias-corrected",
        "delta": {"_update": _second_moment_uncorrected},
        "explanation": "m was divided by 1 - beta1**t but v was used raw. v starts at zero and with "
                       "beta2 = 0.999 holds only 0.1% of g**2 after one step, so sqrt(v) is about 30 times too "
                       "small and the first steps come out about 30 times lr instead of lr. Both averages need "
                       "their own correction: v_hat = v / (1 - beta2**t).",
        "hint": "Divide by sqrt(v / (1 - beta2**t)) + eps, not sqrt(v) + eps.",
    },
    {
        "slug": "hf-adamw",
        "name": "Hugging Face transformers' old AdamW",
        "delta": {"_update": _eps_before_correction, "_apply": _apply_decay_after},
        "library": "Hugging Face transformers (transformers.AdamW, since deprecated for torch.optim.AdamW)",
        "convention": True,
        "explanation": "This is transformers.AdamW, the optimizer of the BERT fine-tuning era. It differs from "
                       "torch.optim.AdamW in two places: eps is added to sqrt(v) before the bias correction "
                       "(folded into the step size lr * sqrt(1 - beta2**t) / (1 - beta1**t)), and the decay "
                       "p -= lr * weight_decay * p is applied after the Adam update, to the already-updated "
                       "weights. (Its defaults also differ: eps = 1e-6 and weight_decay = 0.0, and "
                       "correct_bias=False drops the bias correction altogether.) torch adds eps to "
                       "sqrt(v_hat) and shrinks the weights before subtracting the update.",
        "hint": "Divide by sqrt(v_hat) + eps with v_hat = v / (1 - beta2**t), and shrink p by "
                "(1 - lr * weight_decay) before subtracting the Adam step.",
    },
    {
        "slug": "fairseq-adam",
        "name": "fairseq's Adam (decoupled decay, eps before correction)",
        "delta": {"_update": _eps_before_correction, "_decay": _decay_always_decoupled},
        "library": "fairseq (FairseqAdam, --optimizer adam), labml.ai Adam, Keras 3 Adam(weight_decay=...)",
        "convention": True,
        "explanation": "This is fairseq's Adam (labml.ai's Adam with its default WeightDecay, and Keras 3's "
                       "Adam with a weight_decay, behave the same): weight decay is always decoupled, "
                       "p -= lr * weight_decay * p as in AdamW, even in the class called Adam, and eps is added "
                       "to sqrt(v) before the bias correction, as PyTorch did before 1.6 and TensorFlow does. "
                       "torch.optim.Adam adds weight_decay * p to the gradient (L2) and adds eps to sqrt(v_hat) "
                       "after the correction; torch's AdamW shares only the decoupled decay.",
        "hint": "In Adam, add weight_decay * p to the gradient; in both, divide by sqrt(v_hat) + eps with "
                "v_hat = v / (1 - beta2**t).",
    },
])
