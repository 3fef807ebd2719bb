"""Cases for the lr-schedule exercise.

Each case drives the subject's ``lr_multiplier`` the way a training loop would: through
``torch.optim.lr_scheduler.LambdaLR`` on a real (tiny) SGD optimizer, reading the learning rate the
optimizer would use at every update. The raw multipliers are observed as well, so a mismatch
is reported both as "lr per step" and as "multiplier per step".

The optimizer itself never steps: LambdaLR writes each lr into the optimizer's param group, and
that is all an update reads of the schedule. An ``SGD.step()`` per scheduler step changed no
observation and was most of the exercise's grading time (about 1,700 steps through torch's
optimizer machinery per submission, each watched by the forbidden-API guard's profile hook).

LambdaLR is forbidden to the learner, but the runtime guard only trips on calls made from the
learner's own file, so this case code may use it.
"""

import warnings

import torch
from torch.optim.lr_scheduler import LambdaLR

from grind_kit import case

# The first torch optimizer in a process imports torch._dynamo (over a second). Building one
# here, while the checks load, keeps that cost off the learner's clock and the reference's timing.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)


def run_schedule(subject, warmup_steps, total_steps, min_ratio, max_lr, num_steps, probe_steps=()):
    """``min_ratio=None`` leaves the argument out, so the subject's default is what runs."""
    def multiplier(step):
        if min_ratio is None:
            return subject.lr_multiplier(step, warmup_steps, total_steps)
        return subject.lr_multiplier(step, warmup_steps, total_steps, min_ratio)

    param = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))
    opt = torch.optim.SGD([param], lr=max_lr)
    # LambdaLR sets lr = max_lr * multiplier(0) at construction, then one step per sched.step().
    sched = LambdaLR(opt, multiplier)
    lrs = []
    with warnings.catch_warnings():
        # Only LambdaLR's "lr_scheduler.step() before optimizer.step()" notice: it is about
        # training loops, and here the optimizer deliberately never steps (see the docstring).
        warnings.filterwarnings("ignore", message=r"Detected call of `lr_scheduler\.step\(\)` before")
        for _ in range(num_steps):
            lr = opt.param_groups[0]["lr"]  # the lr this update uses
            # A multiplier returned as a tensor makes the lr a tensor, which the scheduler then
            # updates in place (fill_) at every step: keep a copy, not the live object.
            lrs.append(lr.detach().clone() if isinstance(lr, torch.Tensor) else lr)
            sched.step()
    observations = {}
    if num_steps:
        observations["lr per step"] = lrs
        observations["multiplier per step"] = [multiplier(step) for step in range(num_steps)]
    if probe_steps:
        # named without the word "step", so a mismatch reads "index i" of this list
        observations[f"multiplier at {list(probe_steps)}"] = [multiplier(s) for s in probe_steps]
    return observations


def fixed(warmup_steps, total_steps, min_ratio, max_lr, num_steps, probe_steps=()):
    def inputs():
        return {"warmup_steps": warmup_steps, "total_steps": total_steps, "min_ratio": min_ratio,
                "max_lr": max_lr, "num_steps": num_steps, "probe_steps": list(probe_steps)}
    return inputs


def random_inputs(size, seed):
    """A schedule of ``size`` total steps, run about 20% past its end."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    total = size
    choice = int(torch.randint(0, 5, (), generator=gen))
    warmup = [0, 1, total // 10, total // 3, total - 1][choice]
    warmup = max(0, min(warmup, total - 1))
    min_ratio = [0.0, 0.1, 0.05, 0.5, 0.01][(seed + size) % 5]
    max_lr = round(float(torch.rand((), generator=gen)) * 0.1 + 1e-3, 6)
    return {"warmup_steps": warmup, "total_steps": total, "min_ratio": min_ratio, "max_lr": max_lr,
            "num_steps": total + max(3, total // 5), "probe_steps": []}


CASES = [
    # warmup 4, decay over 8 steps, floor 10% of max_lr: the numbers in the statement.
    case("worked_example", "example", inputs=fixed(4, 12, 0.1, 0.01, 16), call=run_schedule),
    case("no_warmup", inputs=fixed(0, 8, 0.1, 0.02, 11), call=run_schedule),
    case("one_warmup_step", inputs=fixed(1, 6, 0.2, 0.1, 9), call=run_schedule),
    case("decay_to_zero_floor", inputs=fixed(3, 10, 0.0, 0.05, 14), call=run_schedule),
    case("single_decay_step", inputs=fixed(9, 10, 0.1, 0.3, 13), call=run_schedule),
    case("one_step_total", inputs=fixed(0, 1, 0.25, 1.0, 4), call=run_schedule),
    # min_ratio left out: the default must be 0 (a floor of 0.1 is a common habit)
    case("min_ratio_left_out", inputs=fixed(2, 8, None, 0.05, 11), call=run_schedule),
    case("far_past_the_end", inputs=fixed(2, 6, 0.1, 1.0, 8, probe_steps=(6, 7, 10, 14, 100, 10_000)),
         call=run_schedule),
    # The two phases probed apart, so that a warmup mistake and a decay mistake made together are
    # each seen on a check of its own (the other cases mix both phases in one observation).
    case("warmup_alone", inputs=fixed(8, 40, 0.1, 1.0, 0, probe_steps=(0, 1, 3, 4, 7)), call=run_schedule),
    case("decay_alone", inputs=fixed(5, 15, 0.2, 1.0, 0, probe_steps=(5, 7, 10, 13, 14, 16, 18, 25)),
         call=run_schedule),
    case("long_run",
         inputs=fixed(300, 3000, 0.1, 3e-4, 0,
                      probe_steps=(0, 1, 150, 299, 300, 301, 1650, 2999, 3000, 3001, 6000)),
         call=run_schedule),
    case("random", "random", inputs=random_inputs, call=run_schedule, sizes=[1, 2, 3, 5, 8, 13, 30, 100, 500],
         seeds=2),
]
