"""Cases for the update-ratio exercise.

The learner writes ``log_step(model, batch, optimizer, max_norm, per="group")``: one real training
step (cross-entropy, backward, global-norm clipping, ``optimizer.step()``) that returns the loss,
the uniform-guess loss ln K, the gradient norm before clipping and the update ratio of each param
group (or of each parameter).

Every case hands it a real float64 classifier and a real ``torch.optim`` optimizer (SGD with
momentum and weight decay, Adam or AdamW) with its param groups, most of them after a few
ordinary training steps, so that the optimizer carries momentum or Adam moments and the step it
takes is not ``lr * grad``: the only way to know how far the parameters moved is to look at them
before and after. Besides what ``log_step`` returns, the case observes how many times the
optimizer stepped (a step pre-hook) and every parameter after the call, so the numbers must come
from the one step that was really taken.
"""

import torch
from torch import nn

from grind_kit import case, flat

# The first torch optimizer built in a process imports torch._dynamo (over a second). Building one
# while the checks load keeps that off the learner's clock.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)

KEYS = ("loss", "uniform_loss", "grad_norm", "update_ratios")


class Problem:
    """A case's model, batch and optimizer in one input; a verdict prints this summary instead
    of the tensors."""

    def __init__(self, model, batch, optimizer, summary):
        self.model, self.batch, self.optimizer, self.summary = model, batch, optimizer, summary

    def __str__(self):
        return self.summary

    __repr__ = __str__


def _optimizer(kind, groups):
    if kind == "adam":
        return torch.optim.Adam(groups, lr=0.01)
    if kind == "adamw":
        return torch.optim.AdamW(groups, lr=0.01, weight_decay=0.1)
    return torch.optim.SGD(groups, lr=0.1, momentum=0.9)


def _groups(model, layout):
    """Param groups as real runs make them. ``two``: weights with decay, biases without; ``layers``:
    the first layer's weight, its bias alone, the last layer; ``one``: everything together;
    ``frozen``: two groups, the first layer's bias frozen (requires_grad False, so it has no
    gradient and does not move) but still listed."""
    first, last = model[0], model[2]
    if layout == "one":
        return [{"params": list(model.parameters())}]
    if layout == "layers":
        return [{"params": [first.weight]}, {"params": [first.bias]}, {"params": [last.weight, last.bias]}]
    if layout == "frozen":
        first.bias.requires_grad_(False)
    return [{"params": [first.weight, last.weight], "weight_decay": 1e-2},
            {"params": [first.bias, last.bias], "weight_decay": 0.0}]


def classifier_case(seed, *, d_in=6, hidden=12, classes=5, batch=16, optimizer="sgd", layout="two", warm=3,
                    max_norm=1.0, per="group", bias_scale=0.5, label_classes=None):
    """A Linear-Tanh-Linear float64 classifier drawn from ``seed``, ``warm`` ordinary training steps
    taken with the optimizer first, then the batch ``log_step`` gets. ``label_classes`` limits the
    batch's labels to the first few classes (a small batch rarely shows every class)."""
    def inputs():
        gen = torch.Generator().manual_seed(seed)
        model = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, classes)).double()
        with torch.no_grad():
            for name, p in model.named_parameters():
                scale = bias_scale if name.endswith("bias") else 0.5
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale)
        opt = _optimizer(optimizer, _groups(model, layout))
        labels = label_classes or classes

        def draw():
            return (torch.randn(batch, d_in, generator=gen, dtype=torch.float64) * 2,
                    torch.randint(labels, (batch,), generator=gen))
        for _ in range(warm):
            x, y = draw()
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
        opt.zero_grad()
        summary = (f"seed {seed}: MLP {d_in}-{hidden}-{classes}, batch of {batch}, {type(opt).__name__} with "
                   f"{len(opt.param_groups)} groups ({layout}) after {warm} steps")
        return {"problem": Problem(model, draw(), opt, summary), "max_norm": max_norm, "per": per}
    return inputs


def worked_example():
    """Ten classes, one weight matrix and no bias: row 0 is [3, 4] (norm 5), the other rows are 0.
    The input [4, -3] is orthogonal to [3, 4], so every logit is 0: a uniform guess."""
    model = nn.Linear(2, 10, bias=False).double()
    with torch.no_grad():
        model.weight.zero_()
        model.weight[0] = torch.tensor([3.0, 4.0], dtype=torch.float64)
    opt = torch.optim.SGD(model.parameters(), lr=5.0)
    batch = (torch.tensor([[4.0, -3.0]], dtype=torch.float64), torch.tensor([0]))
    summary = "Linear(2, 10, bias=False), row 0 [3, 4]; x [[4, -3]], y [0]; SGD lr 5, 1 group"
    return {"problem": Problem(model, batch, opt, summary), "max_norm": 0.1, "per": "group"}


def run_log_step(subject, problem, max_norm, per):
    optimizer = problem.optimizer
    steps = []
    handle = optimizer.register_step_pre_hook(lambda opt, args, kwargs: steps.append(1))
    try:
        if per == "group":  # the default: leave the argument out
            logged = subject.log_step(problem.model, problem.batch, optimizer, max_norm)
        else:
            logged = subject.log_step(problem.model, problem.batch, optimizer, max_norm, per=per)
    finally:
        handle.remove()
    missing = [key for key in KEYS if not hasattr(logged, "keys") or key not in logged]
    if missing:
        raise KeyError(f"log_step must return a dict with the keys {', '.join(KEYS)}; missing {missing[0]!r}")
    return {
        "loss": float(logged["loss"]),
        "uniform loss": float(logged["uniform_loss"]),
        "grad norm": float(logged["grad_norm"]),
        "update ratios": [float(r) for r in logged["update_ratios"]],
        "optimizer updates": len(steps),
        "params afterwards": flat(p for group in optimizer.param_groups for p in group["params"]),
    }


def random_inputs(size, seed):
    """``size`` classes and a hidden layer of ``2 * size``; the optimizer, the groups, per group or
    per parameter, and a max_norm that clips or not are drawn from the seed."""
    gen = torch.Generator().manual_seed(7727 * size + seed)
    pick = lambda options: options[int(torch.randint(len(options), (), generator=gen))]  # noqa: E731
    return classifier_case(3000 + 10 * size + seed, classes=size, hidden=2 * size, batch=pick([4, 16]),
                           optimizer=pick(["sgd", "adam", "adamw"]), layout=pick(["two", "layers"]),
                           warm=pick([0, 2, 5]), max_norm=pick([0.05, 0.5, 100.0]),
                           per=pick(["group", "group", "parameter"]))()


CASES = [
    case("worked_example", "example", call=run_log_step, inputs=worked_example,
         shown=["loss", "uniform loss", "grad norm", "update ratios", "optimizer updates"]),
    # Momentum and weight decay, three steps in: the step is not lr * grad.
    case("momentum_two_groups", call=run_log_step, inputs=classifier_case(1)),
    case("adamw_layer_groups", call=run_log_step,
         inputs=classifier_case(2, optimizer="adamw", layout="layers", max_norm=0.5)),
    case("adam_per_parameter", call=run_log_step,
         inputs=classifier_case(3, optimizer="adam", layout="layers", per="parameter", max_norm=0.2)),
    case("sgd_per_parameter", call=run_log_step, inputs=classifier_case(4, per="parameter", max_norm=0.3)),
    # max_norm far above the gradient: clipping does nothing, before and after agree.
    case("clipping_inactive", call=run_log_step, inputs=classifier_case(5, optimizer="adamw", max_norm=1e3)),
    # The very first step of a fresh optimizer, everything in one group.
    case("first_step_one_group", call=run_log_step, inputs=classifier_case(6, warm=0, layout="one", max_norm=0.5)),
    # Biases started near zero: their group's ratio is large, which is the warning it should give.
    case("near_zero_biases", call=run_log_step, inputs=classifier_case(7, bias_scale=1e-3, max_norm=0.5)),
    # A frozen bias listed in a group: no gradient, no movement, but part of its group's size.
    case("frozen_parameter", call=run_log_step,
         inputs=classifier_case(8, optimizer="adam", layout="frozen", max_norm=0.5)),
    # 40 classes, labels only from the first three: K is the number of logits.
    case("many_classes_few_labels", call=run_log_step,
         inputs=classifier_case(9, classes=40, hidden=16, batch=8, label_classes=3, max_norm=0.5)),
    case("random", "random", call=run_log_step, inputs=random_inputs, sizes=[2, 5, 10, 32], seeds=2),
]
