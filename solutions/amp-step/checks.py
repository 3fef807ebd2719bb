"""Cases for the amp-step exercise.

Every case hands the learner's ``train_amp`` a small model, its microbatches and three recording
objects, then observes what the loop did with them:

- ``RecordingScaler``: a real ``torch.amp.GradScaler("cpu")`` (a subclass that only takes notes)
  that remembers the scale each ``scale()`` call used;
- ``LoggedSGD``: the kit's RecordingSGD (plain SGD, it keeps the gradients every ``step()`` saw),
  which also keeps the learning rate each step used;
- ``ExponentialSchedule``: an exponential learning-rate schedule written for this exercise in the
  manner of ``torch.optim.lr_scheduler.ExponentialLR`` (lr = base_lr * gamma ** steps taken),
  counting its ``step()`` calls. torch's own schedulers only accept torch optimizers, and building
  one of those imports torch._dynamo, a second or more on every run.

Overflows come two ways: an ``inf`` or ``nan`` planted in one microbatch's inputs (a bad batch),
and, in the ``fp16`` cases, a model whose forward pass runs in float16, so that a large loss
scale overflows float16 inside the backward pass although every input is finite, which is what
GradScaler meets at the start of a real fp16 run.
"""

import torch
import torch.nn.functional as F

from grind_kit import RecordingSGD, case, param_entries

SPECIAL = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


class RecordingScaler(torch.amp.GradScaler):
    """GradScaler on the CPU, unchanged, plus a record of the scale each scale() call used."""

    def __init__(self, **kwargs):
        super().__init__("cpu", **kwargs)
        self.scales_used = []

    def scale(self, outputs):
        self.scales_used.append(self.get_scale())
        return super().scale(outputs)


class LoggedSGD(RecordingSGD):
    """RecordingSGD that also keeps, per step(), the learning rate of its (only) group."""

    def __init__(self, params, lr):
        super().__init__(params, lr)
        self.lrs = []

    def step(self, closure=None):
        self.lrs.append(float(self.param_groups[0]["lr"]))
        return super().step(closure)


class ExponentialSchedule:
    """lr = base_lr * gamma ** (number of step() calls so far), set on every param group, in the
    manner of torch's ExponentialLR (written for this exercise)."""

    def __init__(self, optimizer, gamma):
        self.optimizer = optimizer
        self.gamma = gamma
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.last_epoch = 0
        self.calls = 0

    def step(self):
        self.calls += 1
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base * self.gamma ** self.last_epoch

    def get_last_lr(self):
        return [group["lr"] for group in self.optimizer.param_groups]


class Probe(torch.nn.Module):
    """The worked example's model: prediction = x[:, :2] @ a + x[:, 2] * b. With the loss
    mean(prediction * y) and y = 1, a microbatch of one example has gradient (x[:2], x[2])."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(2))
        self.b = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return x[:, :2] @ self.a + x[:, 2] * self.b


class Net(torch.nn.Module):
    """A float32 linear layer; with ``fp16`` its forward pass runs in float16 (like an autocast
    region) and returns float32, so its backward pass can overflow float16."""

    def __init__(self, d_in, d_out, fp16, gen):
        super().__init__()
        self.fp16 = fp16
        self.weight = torch.nn.Parameter(torch.randn(d_out, d_in, generator=gen) * 0.5)
        self.bias = torch.nn.Parameter(torch.randn(d_out, generator=gen) * 0.5)

    def forward(self, x):
        if self.fp16:
            return F.linear(x.half(), self.weight.half(), self.bias.half()).float()
        return F.linear(x, self.weight, self.bias)


def probe_loss(prediction, y):
    return (prediction * y).mean()


def mse(prediction, y):
    return F.mse_loss(prediction, y)


LOSSES = {"probe": probe_loss, "mse": mse}


def plant(microbatches, bad):
    """bad: (microbatch index, token) pairs; the token goes into that microbatch's x[0, 0]."""
    for index, token in bad:
        microbatches[index][0][0, 0] = SPECIAL[token]
    return microbatches


def probe_inputs(xs, accum_steps, max_norm, lr, gamma, bad=(), **scaler_kwargs):
    """Microbatches of one example each for the Probe model, with y = 1."""
    def inputs(**_):
        microbatches = [(torch.tensor([x], dtype=torch.float32), torch.ones(1)) for x in xs]
        return {"model": Probe(), "microbatches": plant(microbatches, bad), "loss": "probe",
                "accum_steps": accum_steps, "max_norm": max_norm, "lr": lr, "gamma": gamma,
                "scaler_kwargs": dict(scaler_kwargs)}
    return inputs


def net_inputs(seed, groups, accum_steps, max_norm, lr=0.05, gamma=0.9, fp16=False, n=4, d_in=3, d_out=2,
               target_scale=1.0, bad=(), **scaler_kwargs):
    """A seeded Net and groups * accum_steps microbatches of n examples; targets times
    target_scale (large targets make large gradients, which overflow float16 sooner)."""
    def inputs(**_):
        gen = torch.Generator().manual_seed(seed)
        model = Net(d_in, d_out, fp16, gen)
        microbatches = [(torch.randn(n, d_in, generator=gen), torch.randn(n, d_out, generator=gen) * target_scale)
                        for _ in range(groups * accum_steps)]
        return {"model": model, "microbatches": plant(microbatches, bad), "loss": "mse",
                "accum_steps": accum_steps, "max_norm": max_norm, "lr": lr, "gamma": gamma,
                "scaler_kwargs": dict(scaler_kwargs)}
    return inputs


def random_inputs(size, seed):
    """size groups; accum_steps 1 to 3; float16 every other seed; one bad microbatch now and then."""
    gen = torch.Generator().manual_seed(4099 * size + seed)
    accum_steps = 1 + (size + seed) % 3
    total = size * accum_steps
    bad = [(int(torch.randint(0, total, (), generator=gen)), ["inf", "nan", "-inf"][(size + seed) % 3])
           for _ in range(size // 3)]
    fp16 = seed % 2 == 1
    return net_inputs(1000 * size + seed, size, accum_steps, max_norm=1e4 if fp16 else 0.5 + (size % 3),
                      lr=0.05, gamma=0.8, fp16=fp16, target_scale=4.0 if fp16 else 1.0, bad=bad,
                      init_scale=2.0 ** (10 + 4 * seed % 7), growth_interval=2 + seed)()


SCALES = "scale per microbatch, then after the loop"


def run(subject, model, microbatches, loss, accum_steps, max_norm, lr, gamma, scaler_kwargs):
    optimizer = LoggedSGD(model.parameters(), lr=lr)
    scaler = RecordingScaler(**scaler_kwargs)
    scheduler = ExponentialSchedule(optimizer, gamma)
    subject.train_amp(model, microbatches, LOSSES[loss], optimizer, scaler, scheduler, accum_steps, max_norm)
    # Four observations, so that a crashing loop's report can still show all that was expected.
    # The parameters follow from the gradients and learning rates of the steps; the number of
    # optimizer steps is the number of rows of "grads per step"; the scale after each update()
    # is the next group's scale per microbatch, and the scale after the loop is the last
    # group's (a loop that skips the last update() leaves the scaler unusable for the next call).
    return {
        SCALES: scaler.scales_used + [scaler.get_scale()],
        "grads per step": optimizer.grads_per_step(),
        "lr per step": optimizer.lrs,
        "scheduler steps": scheduler.calls,
    }


run.entries = param_entries("grads per step")

# The worked example: three groups of two microbatches. Group 1's true gradient is the seed's
# clipping example, (3, 4) and (12), norm 13; group 2 overflows; group 3's norm is 0.5.
WORKED = [[2.0, 4.0, 10.0], [4.0, 4.0, 14.0],
          [2.0, 4.0, 10.0], [3.0, 4.0, 14.0],
          [0.5, 0.2, 0.0], [0.1, 0.6, 0.0]]

CASES = [
    case("worked_example", "example", call=run,
         inputs=probe_inputs(WORKED, accum_steps=2, max_norm=1.0, lr=0.1, gamma=0.5, bad=[(3, "inf")],
                             init_scale=1024.0),
         shown=[SCALES, "lr per step", "scheduler steps"]),
    # the true norm is below max_norm, S times it is far above: only unscaled clipping leaves it alone
    case("clip_inactive_in_true_units", call=run,
         inputs=net_inputs(1, groups=3, accum_steps=2, max_norm=50.0, init_scale=4096.0)),
    case("clip_active", call=run,
         inputs=net_inputs(2, groups=3, accum_steps=3, max_norm=0.1, init_scale=256.0)),
    case("nan_in_first_microbatch", call=run,
         inputs=net_inputs(3, groups=4, accum_steps=2, max_norm=2.0, bad=[(2, "nan")], init_scale=512.0)),
    case("overflows_in_a_row", call=run,
         inputs=net_inputs(4, groups=5, accum_steps=2, max_norm=1.0, bad=[(3, "inf"), (4, "-inf")],
                           init_scale=2048.0)),
    # the scale grows after every 2 clean updates: those updates are real and advance the schedule
    case("scale_growth", call=run,
         inputs=net_inputs(5, groups=5, accum_steps=2, max_norm=1.0, init_scale=128.0, growth_interval=2)),
    # the last group overflows: only its update() backs the scale off, after the loop
    case("overflow_in_the_last_group", call=run,
         inputs=net_inputs(9, groups=3, accum_steps=2, max_norm=1.0, bad=[(5, "inf")], init_scale=1024.0)),
    case("accum_steps_one", call=run,
         inputs=net_inputs(6, groups=4, accum_steps=1, max_norm=1.0, bad=[(1, "inf")], init_scale=1024.0)),
    case("single_group", call=run,
         inputs=net_inputs(7, groups=1, accum_steps=3, max_norm=1.0, init_scale=1024.0)),
    # float16 forward: the default scale 2**16 overflows in the backward pass until it has backed off
    case("fp16_overflow_at_start", call=run,
         inputs=net_inputs(8, groups=8, accum_steps=2, max_norm=1e4, fp16=True, target_scale=8.0,
                           growth_interval=3)),
    # every group overflows (an all-inf group, then an all-NaN one): no update at all, no
    # scheduler step, and the scale halves after each group
    case("every_group_overflows", call=run,
         inputs=probe_inputs([[1.0, 1.0, 1.0]] * 4, accum_steps=2, max_norm=1.0, lr=0.1, gamma=0.5,
                             bad=[(0, "inf"), (1, "inf"), (2, "nan"), (3, "nan")], init_scale=256.0)),
    # a group whose true gradient is exactly zero (x = 0): the clip must leave it at zero, not NaN
    case("zero_gradient_group", call=run,
         inputs=probe_inputs([[2.0, 4.0, 10.0], [4.0, 4.0, 14.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0],
                              [0.5, 0.2, 0.0], [0.1, 0.6, 0.0]], accum_steps=2, max_norm=1.0, lr=0.1, gamma=0.5,
                             init_scale=64.0)),
    # tensors of very different sizes of gradient: only a global clip keeps their ratio
    case("one_tensor_dominates", call=run,
         inputs=probe_inputs([[0.1, 0.1, 20.0], [0.1, 0.2, 30.0], [0.3, 0.1, 5.0], [0.2, 0.1, 15.0]],
                             accum_steps=2, max_norm=2.0, lr=0.1, gamma=0.5, init_scale=128.0)),
    case("random", "random", call=run, inputs=random_inputs, sizes=[2, 4, 8], seeds=2),
]
