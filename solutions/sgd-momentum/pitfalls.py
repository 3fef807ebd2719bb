"""Known-wrong SGD variants: whole optimizers a learner could plausibly write. A small base
class keeps each mistake to the few lines that differ from a correct implementation.

Every pitfall is a *delta* (grind_kit.Deltas): a dict of methods that override ``_Base`` (its
``"delta"`` key). Two deltas that override different methods compose into one optimizer making
both mistakes (``combine("dampening-ignored", "decay-after-momentum")``); ``combine`` returns None
when both change the same method. Pitfalls that are a real library's own convention carry
``"library"`` and ``"convention": True``, and their explanation says how that library differs from
torch.optim.SGD."""

import torch

from grind_kit import Deltas, OptimizerPlumbing, plumbing_pitfalls


class _Base(OptimizerPlumbing):
    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        self.params = self._keep(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.buffers = {}

    # --- the pieces a mistake changes -------------------------------------------------------
    def _decay(self, p, g):
        return g + self.weight_decay * p if self.weight_decay else g

    def _key(self, p):
        return id(p)

    def _first_buffer(self, g):
        return g.clone()

    def _damp(self):
        return self.dampening

    def _uses_velocity(self):
        return bool(self.momentum)

    def _velocity(self, p, g):
        key = self._key(p)
        buf = self.buffers.get(key)
        if buf is None:
            buf = self.buffers[key] = self._first_buffer(g)
        else:
            buf.mul_(self.momentum).add_(g, alpha=1 - self._damp())
        return buf

    def _direction(self, g, buf):
        return g + self.momentum * buf if self.nesterov else buf

    def _update(self, p, g):
        g = self._decay(p, g)
        if self._uses_velocity():
            g = self._direction(g, self._velocity(p, g))
        return g

    @torch.no_grad()
    def step(self):
        for p in self.params:
            g = self._grad(p)
            if g is None:
                continue
            p.sub_(self.lr * self._update(p, g))


# Each mistake is an SGD class: _Base with the delta's methods overridden, as {"SGD": cls}.
MISTAKES = Deltas.on_class(_Base, "SGD")

# Which pairs grind runs together to name a submission that makes two mistakes at once: every
# pair whose deltas override different methods (combine() skips the others).
COMBINE = "all"
combine = MISTAKES.combine


# --- the mistakes ------------------------------------------------------------------------------

def _zero_buffer_velocity(self, p, g):
    # buf starts at zero, so the first step is (1 - dampening) * g instead of g
    key = self._key(p)
    buf = self.buffers.setdefault(key, torch.zeros_like(p))
    buf.mul_(self.momentum).add_(g, alpha=1 - self._damp())
    return buf


def _ema_velocity(self, p, g):
    # Adam's first moment: buf = momentum * buf + (1 - momentum) * g, from zero
    key = self._key(p)
    buf = self.buffers.setdefault(key, torch.zeros_like(p))
    buf.mul_(self.momentum).add_(g, alpha=1 - self.momentum)
    return buf


def _undamped_velocity(self, p, g):
    key = self._key(p)
    buf = self.buffers.get(key)
    if buf is None:
        buf = self.buffers[key] = g.clone()
    else:
        buf.mul_(self.momentum).add_(g)  # dampening never used
    return buf


def _plain_direction(self, g, buf):
    return buf  # nesterov flag ignored


def _velocity_twice(self, g, buf):
    g = buf  # the plain-momentum line ran first and overwrote g
    return g + self.momentum * buf if self.nesterov else g


def _update_decay_after(self, p, g):
    if self.momentum:
        g = self._direction(g, self._velocity(p, g))
    return g + self.weight_decay * p if self.weight_decay else g  # decay skips the velocity


def _no_decay(self, p, g):
    return g


def _shared_key(self, p):
    return "buf"  # one velocity for the whole optimizer


def _none_as_zero(self, p):
    return torch.zeros_like(p) if p.grad is None else p.grad


def _aliased_buffer(self, g):
    return g  # the gradient tensor itself, no copy


def _damp_defaults_to_momentum(self):
    return self.dampening or self.momentum  # Lua Torch: damp = config.dampening or mom


def _decay_weights_without_lr(self, p, g):
    if self.weight_decay:
        p.mul_(1 - self.weight_decay)  # decoupled, and not scaled by lr
    return g


def _always_velocity(self):
    return True  # no `if momentum` guard: with momentum 0 dampening still scales later gradients


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "zero-initialised-buffer",
        "name": "velocity started at zero (dampening on the first step)",
        "delta": {"_velocity": _zero_buffer_velocity},
        "explanation": "The velocity started at zero and was updated with buf = momentum * buf + (1 - dampening) * g "
                       "from the first step on, so the first step was only (1 - dampening) * g. torch.optim.SGD "
                       "starts the velocity at the first gradient itself, undamped; dampening applies from the "
                       "second step. (Writing buf = (1 - dampening) * g on the first step is the same mistake.)",
        "hint": "On a parameter's first update set buf = g.clone(); use momentum * buf + (1 - dampening) * g "
                "only afterwards.",
    },
    {
        "slug": "ema-momentum",
        "name": "momentum as an average: (1 - momentum) * g",
        "delta": {"_velocity": _ema_velocity},
        "explanation": "The velocity was an exponential average, buf = momentum * buf + (1 - momentum) * g, as for "
                       "Adam's first moment. That keeps the velocity at the gradient's size, so a persistent "
                       "gradient never builds up the 1 / (1 - momentum) = 10x step that SGD momentum gives at 0.9. "
                       "torch scales the new gradient by 1 - dampening (1 by default), not by 1 - momentum.",
        "hint": "buf = momentum * buf + (1 - dampening) * g, and the first velocity is g itself.",
    },
    {
        "slug": "dampening-ignored",
        "name": "dampening ignored",
        "delta": {"_velocity": _undamped_velocity},
        "explanation": "The velocity was updated with buf = momentum * buf + g even though dampening was set, so "
                       "every gradient after the first was added at full size. dampening scales the new gradient "
                       "by 1 - dampening from the second step on.",
        "hint": "After the first step, buf = momentum * buf + (1 - dampening) * g.",
    },
    {
        "slug": "nesterov-ignored",
        "name": "nesterov=True behaves like plain momentum",
        "delta": {"_direction": _plain_direction},
        "explanation": "With nesterov=True the step still used the velocity alone. Nesterov momentum steps along "
                       "g + momentum * buf, where buf already includes this step's gradient: the gradient is "
                       "counted once more, looking ahead along the velocity. Adding momentum times the velocity "
                       "from *before* this step's update gives exactly plain momentum again, so that ordering is "
                       "the same mistake.",
        "hint": "Update buf first, then step along g + momentum * buf when nesterov is set.",
    },
    {
        "slug": "nesterov-velocity-twice",
        "name": "Nesterov adds momentum * buf to the velocity instead of the gradient",
        "delta": {"_direction": _velocity_twice},
        "explanation": "The Nesterov step was buf + momentum * buf: the gradient variable had already been "
                       "replaced by the velocity when the look-ahead term was added. torch steps along "
                       "g + momentum * buf, the current gradient (with weight decay) plus momentum times the "
                       "updated velocity.",
        "hint": "Keep the gradient g and the velocity buf in separate variables; the Nesterov direction is "
                "g + momentum * buf.",
    },
    {
        "slug": "decay-after-momentum",
        "name": "weight decay added after the velocity",
        "delta": {"_update": _update_decay_after},
        "library": "fastai SGD (decouple_wd=True, its default), Keras 3 optimizers' weight_decay",
        "convention": True,
        "explanation": "weight_decay * p was added to the step after the velocity had been updated, so the decay "
                       "never entered the velocity and was not amplified by momentum. That is decoupled weight "
                       "decay, p *= 1 - lr * weight_decay before the step, which fastai's SGD and every Keras 3 "
                       "optimizer apply (and which AdamW habits produce). torch.optim.SGD treats weight decay as "
                       "an L2 term: it adds weight_decay * p to the gradient first, and the velocity accumulates it.",
        "hint": "g = p.grad + weight_decay * p, then update the velocity with that g.",
    },
    {
        "slug": "decay-ignored",
        "name": "weight decay ignored",
        "delta": {"_decay": _no_decay},
        "explanation": "weight_decay had no effect: the weights were never pulled toward zero. torch.optim.SGD adds "
                       "weight_decay * p to the gradient before anything else, with or without momentum.",
        "hint": "Start each parameter's update with g = p.grad + weight_decay * p.",
    },
    {
        "slug": "shared-buffer",
        "name": "one velocity shared by all parameters",
        "delta": {"_key": _shared_key},
        "explanation": "A single momentum buffer was used for every parameter, so each parameter's velocity mixed "
                       "in the gradients of the others (and parameters of different shapes cannot share it at "
                       "all). Every parameter needs its own velocity, shaped like it.",
        "hint": "Keep one buffer per parameter: a list indexed like self.params, or a dict keyed by the parameter.",
    },
    {
        "slug": "none-grad-as-zero",
        "name": "a missing gradient treated as zero",
        "delta": {"_grad": _none_as_zero},
        "explanation": "A parameter whose .grad is None was updated as if its gradient were zero, so it kept "
                       "coasting on its old velocity (and weight decay still shrank it). torch.optim.SGD skips "
                       "such a parameter entirely: it does not move and its velocity is left untouched until its "
                       "next gradient.",
        "hint": "if p.grad is None: continue, before touching the parameter or its velocity.",
    },
    {
        "slug": "buffer-aliases-grad",
        "name": "velocity stored without a copy of the gradient",
        "delta": {"_first_buffer": _aliased_buffer},
        "explanation": "The first velocity was the p.grad tensor itself, not a copy. When the training loop zeroes "
                       "gradients in place (zero_grad(set_to_none=False)) and backward() accumulates into them, the "
                       "velocity is wiped and then overwritten by the next gradient, and the in-place momentum "
                       "update in turn corrupts p.grad. torch stores a clone.",
        "hint": "buf = g.clone() (or torch.clone(g).detach()) on the first step.",
    },
    *plumbing_pitfalls("params-generator-consumed", "zero-grad-on-none"),
    {
        "slug": "dampening-without-momentum",
        "name": "dampening applied with momentum 0",
        "delta": {"_uses_velocity": _always_velocity},
        "explanation": "With momentum = 0 a velocity was still kept, buf = 0 * buf + (1 - dampening) * g, so "
                       "every step after the first was scaled by 1 - dampening. In torch.optim.SGD momentum 0 "
                       "means no velocity at all: the direction is g, and dampening has no effect.",
        "hint": "Only create and update the velocity when momentum != 0; otherwise step along g.",
    },
    {
        "slug": "lua-torch-dampening",
        "name": "dampening defaults to momentum (Lua Torch's optim.sgd)",
        "delta": {"_damp": _damp_defaults_to_momentum},
        "library": "Lua Torch (optim.sgd: damp = config.dampening or mom)",
        "convention": True,
        "explanation": "Without a dampening, the velocity was updated with buf = momentum * buf + (1 - momentum) * g: "
                       "dampening fell back to the momentum, which is Lua Torch's optim.sgd convention (the "
                       "first velocity is still g itself). PyTorch changed the default to dampening = 0, so "
                       "torch.optim.SGD adds each new gradient at full size, buf = momentum * buf + g, and only "
                       "an explicit dampening scales it. With momentum 0.9 Lua's velocity stays near the size of "
                       "the gradient instead of growing toward 10 times it.",
        "hint": "Use the dampening you were given (0 by default): buf = momentum * buf + (1 - dampening) * g.",
    },
    {
        "slug": "sgdw-decay-without-lr",
        "name": "decoupled weight decay not scaled by lr (SGDW)",
        "delta": {"_decay": _decay_weights_without_lr},
        "library": "TensorFlow Addons SGDW (tf.contrib.opt.MomentumWOptimizer)",
        "convention": True,
        "explanation": "The weights were shrunk directly, p *= 1 - weight_decay, before the momentum step, and the "
                       "decay never entered the velocity. That is SGDW, the decoupled decay of TensorFlow Addons "
                       "(after Loshchilov and Hutter): an absolute rate per step, not multiplied by lr. "
                       "torch.optim.SGD's weight_decay is an L2 term instead: weight_decay * p is added to the "
                       "gradient, so it is multiplied by lr and accumulated by the velocity.",
        "hint": "g = p.grad + weight_decay * p, before the velocity; never touch p except through p -= lr * direction.",
    },
])
