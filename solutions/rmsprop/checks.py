"""Cases for rmsprop: each builds fresh inputs and records named observations.

The same code runs against the learner, the reference, the oracle (torch.optim.RMSprop) and
every pitfall. Most cases run the subject's optimizer in lockstep with a fixed script of
gradients (``grind_kit.lockstep``: gradients assigned to ``p.grad`` directly, so tiny, huge and
missing ones are exactly where the case puts them; every parameter recorded after every
``step()``, so a report names the first step that went wrong). Two cases run the kit's training
loop on an nn.Linear instead, built from ``model.parameters()`` (a generator).

Which case exposes what, in short: tiny gradients show where eps sits (inside or outside the
square root); a large eps shows it again once the mean square no longer starts at zero (how a
port of TensorFlow 1's RMSprop is told from a mean square merely started at one); a constant
gradient shows the early steps shrinking as the mean square fills up (10, 7.09, 5.80 times lr
with alpha = 0.99), which a missing (1 - alpha), a swapped alpha or an Adam-style bias
correction all change; the momentum cases show what the velocity holds; the centered cases
what is subtracted under the root; parameters without a gradient on some steps, with momentum,
show whether a skipped parameter keeps coasting (it must not) or has its averages decayed.

A learner may subclass torch.optim.Optimizer, and the first Optimizer built in a process imports
torch._dynamo: over a second normally, several on a loaded machine, which once pushed a correct
subclass past the 10 s limit in its first case. One throwaway optimizer, built below while the
checks load (before the guards and before the learner's clock starts), moves that cost off the
clock for every subject alike.
"""

import torch

from grind_kit import case, lockstep, log_scales, script, seeded, sometimes, training_inputs, training_loop

# The warm-up described above: imports torch._dynamo now, not inside the learner's first step.
torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)


def random_inputs(size, seed):
    """``size`` entries over up to three parameters, 40 steps, hyperparameters drawn from the
    seed (alpha, eps, weight decay, momentum, centered), per-entry gradient scales from 1e-10
    to 1e5 on the first parameter, and the last one missing its gradient on some steps."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    pick = lambda options: options[int(torch.randint(0, len(options), (), generator=gen))]  # noqa: E731
    count = min(3, size)
    shapes = [(max(1, size // count),) for _ in range(count)]
    kwargs = {"lr": pick([0.001, 0.01, 0.03]), "alpha": pick([0.9, 0.99, 0.999]), "eps": pick([1e-8, 1e-6, 1e-3]),
              "weight_decay": pick([0.0, 0.01, 0.1]), "momentum": pick([0.0, 0.5, 0.9]),
              "centered": bool(seed % 2)}
    scales = [1.0] * count
    scales[0] = log_scales(shapes[0], 100 * size + seed)
    period = 2 + int(torch.randint(0, 4, (), generator=gen))
    none_when = [None] * count
    none_when[-1] = lambda t: t < 2 or t % period == 0
    return seeded(shapes, 31 * size + seed, steps=40, scales=scales, none_when=none_when, **kwargs)()


CASES = [
    # Public: plain RMSprop, constant gradient [0.5, -2]. The mean square after t steps is
    # (1 - 0.99**t) * g**2, so the steps are lr / sqrt(1 - 0.99**t): 10, 7.09, 5.80 times lr.
    case("worked_example", "example", call=lockstep,
         inputs=script([[1.0, 1.0]], [[[0.5, -2.0]]] * 3, lr=0.01)),
    # Public: momentum 0.9 keeps a velocity of those normalised steps: 10, 16.09, 20.28.
    case("worked_example_momentum", "example", call=lockstep,
         inputs=script([[0.0]], [[[1.0]]] * 3, lr=0.01, momentum=0.9)),

    # Every argument left at its default: RMSprop(params) alone (lr 1e-2, alpha 0.99, eps 1e-8).
    case("all_arguments_default", call=lockstep, inputs=seeded([(5,)], 1)),
    case("constant_gradient_settles_to_lr", call=lockstep,
         inputs=script([[0.0, 0.0]], [[[1.0, -3.0]]] * 60, lr=0.001)),
    case("alpha_0_9", call=lockstep, inputs=seeded([(5,)], 2, lr=0.01, alpha=0.9)),
    # |g| = 1e-10: sqrt of the mean square is about 1e-11, so eps = 1e-8 dominates the denominator.
    case("tiny_gradients", call=lockstep, inputs=seeded([(6,)], 3, scales=[1e-10], lr=0.01)),
    case("huge_gradients", call=lockstep, inputs=seeded([(6,)], 4, scales=[1e5], lr=0.01)),
    case("mixed_gradient_scales", call=lockstep,
         inputs=seeded([(12,)], 5, scales=[log_scales((12,), 5)], lr=0.01)),
    # eps = 0.1 is comparable with the root of the mean square: its place matters at every step.
    case("large_eps", call=lockstep, inputs=seeded([(5,)], 6, lr=0.01, alpha=0.9, eps=0.1)),
    case("weight_decay", call=lockstep,
         inputs=seeded([(4,), (3,)], 7, scales=[1.0, 1e-3], lr=0.01, weight_decay=0.1)),
    case("momentum", call=lockstep, inputs=seeded([(5,)], 8, lr=0.01, momentum=0.9)),
    case("centered", call=lockstep, inputs=seeded([(5,)], 9, lr=0.01, centered=True)),
    case("centered_alpha_0_9", call=lockstep, inputs=seeded([(5,)], 10, lr=0.01, alpha=0.9, centered=True)),
    case("centered_with_momentum", call=lockstep,
         inputs=seeded([(5,)], 11, lr=0.01, momentum=0.8, centered=True)),
    case("everything_at_once", call=lockstep,
         inputs=seeded([(2, 3), (4,)], 12, lr=0.01, alpha=0.95, eps=1e-4, weight_decay=0.05, momentum=0.9,
                       centered=True)),
    case("several_parameters_and_scalar", call=lockstep,
         inputs=seeded([(2, 3), (4,), ()], 13, lr=0.01, momentum=0.5)),
    case("parameter_sometimes_without_grad", call=lockstep,
         inputs=seeded([(4,)], 14, lr=0.01, none_when=[sometimes(3, 3)])),
    case("without_grad_with_momentum", call=lockstep,
         inputs=seeded([(3,), (3,)], 15, lr=0.01, momentum=0.9, centered=True,
                       none_when=[None, sometimes(2, 4)])),
    case("late_first_gradient_and_never", call=lockstep,
         inputs=seeded([(3,), (2,), (2,)], 16, lr=0.01, momentum=0.9, weight_decay=0.05,
                       none_when=[None, lambda t: t < 5, lambda t: True])),
    case("float32_parameters", call=lockstep,
         inputs=seeded([(3, 2), (4,)], 17, dtype=torch.float32, lr=0.01, momentum=0.9, centered=True,
                       weight_decay=0.01)),
    # A zero gradient is a gradient, not a missing one: the first parameter's gradients stop at
    # step 3 and it keeps coasting on its velocity while its mean square decays; the second gets
    # exact zeros from the start (0 / (0 + eps): it stays put, and no NaN).
    case("zero_gradients_keep_momentum", call=lockstep,
         inputs=script([[1.0, -1.0], [0.5]], [[[0.5, -2.0], [0.0]]] * 3 + [[[0.0, 0.0], [0.0]]] * 4,
                       lr=0.01, momentum=0.9)),
    case("zero_gradients_centered", call=lockstep,
         inputs=script([[1.0, -1.0], [0.5]], [[[0.0, 0.0], [0.0]], [[0.5, -2.0], [0.0]], [[0.0, 0.0], [0.0]],
                                              [[1.0, 1.0], [0.0]]], lr=0.01, centered=True, weight_decay=0.1)),
    case("training_loop", call=training_loop, inputs=training_inputs(18, steps=30, lr=0.01)),
    case("training_loop_momentum_centered", call=training_loop,
         inputs=training_inputs(19, steps=30, lr=0.005, momentum=0.9, centered=True, weight_decay=1e-3)),

    case("random", "random", call=lockstep, inputs=random_inputs, sizes=[1, 4, 16, 64], seeds=2),
]
