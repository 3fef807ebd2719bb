"""Cases for the lr-range-test exercise.

The learner writes ``lr_range_test(model, loss_fn, batches, optimizer, start_lr=1e-7,
steps_per_decade=50, stop_factor=4.0)`` and returns ``(lrs, losses, suggested_lr)``. Each case hands
it a real tiny float64 network (``Linear(3, h)``, ``Tanh``, ``Linear(h, 1)``) with a squared-error
loss, a stream of seeded minibatches as an *iterator* (read once, never indexed or measured), and a
real ``torch.optim`` optimizer (SGD with momentum, or Adam) whose parameters are split into groups,
weights and biases apart, as a real run would do for weight decay.

What the loop did is watched from inside the optimizer, not taken from what it returns: a step
pre-hook (``Optimizer.register_step_pre_hook``) writes down every group's learning rate at the
moment each ``step()`` runs. So a loop that sets only the first group, or sets the learning rate
after stepping, is seen as such even when the curve it returns looks right.

The networks and data are chosen so that the curve has the usual shape: the loss barely moves
while the learning rate is tiny, falls, bottoms out, then rises until the stop rule fires. Real
data are noisy, and so is this curve: that is what separates the raw loss from a smoothed one.
"""

import torch
from torch import nn

from grind_kit import case

# The first torch optimizer built in a process imports torch._dynamo (over a second). Building one
# while the checks load keeps that off the learner's clock.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

CONSTRUCTED_LR = 0.05  # what the optimizer holds before the test sets anything


class Problem:
    """A case's network, data and optimizer in one input. A verdict prints each input in full, and
    hundreds of minibatches would bury the configuration, so it shows this summary instead."""

    def __init__(self, model, batches, optimizer, summary):
        self.model, self.batches, self.optimizer, self.summary = model, batches, optimizer, summary

    def __str__(self):
        return self.summary

    __repr__ = __str__


def problem(seed, *, batches=150, batch_size=32, hidden=8, optimizer="sgd", groups=2, input_scale=1.0):
    """A seeded regression problem: targets 2 * tanh(x @ w) plus a little noise, a network started
    from standard normal weights (far from the targets, so the loss has somewhere to fall), and
    ``batches`` minibatches of ``batch_size`` fresh examples. ``input_scale`` multiplies the inputs
    (unnormalised features; the first layer starts that much smaller to match): the loss is then
    that much more curved, and the sweep diverges at a smaller lr, in fewer steps."""
    def inputs(**config):
        gen = torch.Generator().manual_seed(seed)
        model = nn.Sequential(nn.Linear(3, hidden), nn.Tanh(), nn.Linear(hidden, 1)).double()
        with torch.no_grad():
            for index, p in enumerate(model.parameters()):
                shrink = 1 / input_scale if index == 0 else 1.0
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * shrink)
        w = torch.randn(3, 1, generator=gen, dtype=torch.float64)
        data = []
        for _ in range(batches):
            x = torch.randn(batch_size, 3, generator=gen, dtype=torch.float64)
            noise = 0.1 * torch.randn(batch_size, 1, generator=gen, dtype=torch.float64)
            data.append((x * input_scale, 2 * torch.tanh(x @ w) + noise))
        named = list(model.named_parameters())
        if groups == 2:  # decay on the weights, none on the biases
            param_groups = [{"params": [p for n, p in named if n.endswith("weight")], "weight_decay": 1e-3},
                            {"params": [p for n, p in named if n.endswith("bias")]}]
        else:  # one group per layer, and the first layer's biases on their own
            param_groups = [{"params": [model[0].weight]}, {"params": [model[0].bias]},
                            {"params": list(model[2].parameters())}]
        if optimizer == "adam":
            opt = torch.optim.Adam(param_groups, lr=CONSTRUCTED_LR)
        else:
            opt = torch.optim.SGD(param_groups, lr=CONSTRUCTED_LR, momentum=0.9)
        scaled = f", inputs x{input_scale:g}" if input_scale != 1 else ""
        summary = (f"seed {seed}: {batches} minibatches of {batch_size}{scaled}, MLP 3-{hidden}-1, "
                   f"{type(opt).__name__} with {len(param_groups)} groups")
        return {"problem": Problem(model, data, opt, summary), "config": dict(config)}
    return inputs


def configured(seed, config=None, **shape):
    """Inputs for one edge case: the problem's shape, and the keyword arguments of the call
    (``config``; the defaults when it is empty, by leaving every argument out)."""
    make = problem(seed, **shape)
    return lambda: make(**(config or {}))


def run_test(subject, problem, config):
    optimizer = problem.optimizer
    seen = []  # every group's lr at each step(), as the optimizer saw it

    def before_step(opt, args, kwargs):
        seen.append([float(group["lr"]) for group in opt.param_groups])

    read = []  # minibatches taken from the iterator: none after the one that fires the stop rule

    def stream():
        for batch in problem.batches:
            read.append(1)
            yield batch

    handle = optimizer.register_step_pre_hook(before_step)
    try:
        lrs, losses, suggested = subject.lr_range_test(problem.model, nn.functional.mse_loss,
                                                       stream(), optimizer, **config)
    finally:
        handle.remove()
    groups = len(optimizer.param_groups)
    return {
        "steps": len(seen),
        "minibatches read": len(read),
        "lr per step": [float(lr) for lr in lrs],
        "loss per step": [float(loss) for loss in losses],
        "group lrs per step": torch.tensor(seen, dtype=torch.float64).reshape(len(seen), groups),
        "suggested lr": float(suggested),
    }


def random_inputs(size, seed):
    """``size`` minibatches, and a growth that covers six decades in them (from 1e-4 to 100), so
    the loss diverges inside the run; the network's width, the optimizer, the stop factor and the
    number of groups are drawn from the seed."""
    gen = torch.Generator().manual_seed(104729 * size + seed)
    pick = lambda options: options[int(torch.randint(len(options), (), generator=gen))]  # noqa: E731
    make = problem(7000 + 10 * size + seed, batches=size, batch_size=pick([16, 32]), hidden=pick([4, 8, 12]),
                   optimizer=pick(["sgd", "sgd", "adam"]), groups=pick([2, 3]))
    return make(start_lr=1e-4, steps_per_decade=max(2, size // 6), stop_factor=pick([3.0, 4.0, 6.0]))


CASES = [
    # The course's numbers: from 1e-7, 10x every 50 steps, stop at 4x the best loss. Unnormalised
    # inputs (x100) make it diverge at a small lr, after 133 steps instead of 300-odd.
    case("worked_example", "example", call=run_test, shown=["steps", "minibatches read", "suggested lr"],
         inputs=configured(0, input_scale=100.0)),
    # A shorter sweep, with the arguments spelled out.
    case("faster_sweep", call=run_test,
         inputs=configured(1, {"start_lr": 1e-4, "steps_per_decade": 10, "stop_factor": 4.0}, batches=80)),
    case("lower_stop_factor", call=run_test,
         inputs=configured(2, {"start_lr": 1e-4, "steps_per_decade": 12, "stop_factor": 2.0}, batches=80)),
    # 30 steps at the defaults only reach 3.6e-7: the batches run out first, no divergence point.
    case("runs_out_before_divergence", call=run_test, inputs=configured(3, batches=30)),
    # Too high from the start: the first loss is the best one, and the curve only climbs.
    case("starts_too_high", call=run_test,
         inputs=configured(4, {"start_lr": 0.5, "steps_per_decade": 20, "stop_factor": 4.0}, batches=60)),
    case("adam_three_groups", call=run_test,
         inputs=configured(5, {"start_lr": 1e-5, "steps_per_decade": 10, "stop_factor": 4.0}, batches=90,
                           optimizer="adam", groups=3)),
    case("random", "random", call=run_test, inputs=random_inputs, sizes=[8, 20, 40], seeds=2),
]
