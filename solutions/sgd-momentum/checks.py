"""Cases for sgd-momentum: each builds fresh inputs and records named observations.

The same code runs against the learner, the reference, the oracle (torch.optim.SGD) and every
pitfall. Most cases run the subject's optimizer in lockstep with a fixed script of gradients
(``grind_kit.lockstep``: gradients assigned to ``p.grad`` directly, so missing ones are exactly
where the case puts them; every parameter recorded after every ``step()``, so a report names the
first step that went wrong). Two cases run the kit's training loop on an nn.Linear instead: one
clears the gradients with the subject's ``zero_grad()``, the other zeroes them in place the way
``zero_grad(set_to_none=False)`` does, which is what exposes a velocity that shares memory with
``p.grad``. (The in-place loop hands over a list: whether a kept generator runs dry in the first
zero_grad() or in __init__ or in the first step() is then told apart by no case, so every way of
keeping model.parameters() gets the same diagnosis, from the other loop.)

No warm-up is needed here: these cases never build a torch optimizer for the learner's run.
Only the oracle is torch's own SGD, and it runs in the trusted child, off the learner's clock.
"""

import torch

from grind_kit import case, lockstep, script, seeded, sometimes, training_inputs, training_loop


def random_inputs(size, seed):
    """``size`` entries over up to three same-shaped parameters, 30 steps, hyperparameters
    drawn from the seed (Nesterov only with zero dampening, as torch requires), and the last
    parameter missing its gradient on some steps."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    pick = lambda options: options[int(torch.randint(0, len(options), (), generator=gen))]  # noqa: E731
    count = min(3, size)
    shapes = [(max(1, size // count),) for _ in range(count)]
    momentum = pick([0.0, 0.5, 0.9, 0.99])
    nesterov = momentum > 0 and seed % 2 == 1
    dampening = 0.0 if nesterov else pick([0.0, 0.1, 0.5])
    kwargs = {"lr": pick([0.01, 0.05, 0.1]), "momentum": momentum, "dampening": dampening,
              "weight_decay": pick([0.0, 0.01, 0.1]), "nesterov": nesterov}
    period = 2 + int(torch.randint(0, 4, (), generator=gen))
    none_when = [None] * count
    none_when[-1] = lambda t: t < 2 or t % period == 0
    return seeded(shapes, 31 * size + seed, none_when=none_when, **kwargs)()


CASES = [
    # Public: constant gradient [1, -2], momentum 0.9: the velocity grows 1, 1.9, 2.71, 3.439 (toward 10).
    case("worked_example", "example", call=lockstep,
         inputs=script([[0.0, 0.0]], [[[1.0, -2.0]]] * 4, lr=0.1, momentum=0.9)),
    # Public: dampening 0.5 is not applied on the first step (velocity 1, 1.4, 1.76).
    case("worked_example_dampening", "example", call=lockstep,
         inputs=script([[0.0]], [[[1.0]]] * 3, lr=0.1, momentum=0.9, dampening=0.5)),

    case("plain_sgd_defaults", call=lockstep, inputs=seeded([(5,)], 1, lr=0.1)),
    # Every argument left at its default, lr = 1e-3 included: SGD(params) alone.
    case("all_arguments_default", call=lockstep, inputs=seeded([(5,)], 15)),
    case("no_momentum_with_weight_decay", call=lockstep, inputs=seeded([(5,)], 2, lr=0.1, weight_decay=0.1)),
    case("no_momentum_ignores_dampening", call=lockstep, inputs=seeded([(4,)], 3, lr=0.1, dampening=0.5)),
    case("constant_gradient_reaches_10x", call=lockstep,
         inputs=script([[0.0]], [[[1.0]]] * 60, lr=0.01, momentum=0.9)),
    case("dampening", call=lockstep, inputs=seeded([(5,)], 4, lr=0.05, momentum=0.9, dampening=0.3)),
    case("nesterov", call=lockstep, inputs=seeded([(5,)], 5, lr=0.05, momentum=0.9, nesterov=True)),
    case("weight_decay_with_momentum", call=lockstep,
         inputs=seeded([(5,)], 6, lr=0.05, momentum=0.9, weight_decay=0.1)),
    case("nesterov_with_weight_decay", call=lockstep,
         inputs=seeded([(5,)], 7, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.05)),
    case("several_parameters_same_shape", call=lockstep,
         inputs=seeded([(3,), (3,), (3,)], 8, lr=0.05, momentum=0.9)),
    case("mixed_shapes_and_scalar", call=lockstep,
         inputs=seeded([(2, 3), (4,), ()], 9, lr=0.05, momentum=0.9, dampening=0.1)),
    case("parameter_sometimes_without_grad", call=lockstep,
         inputs=seeded([(4,)], 10, lr=0.05, momentum=0.9, none_when=[sometimes(3, 3)])),
    case("late_first_gradient_and_never", call=lockstep,
         inputs=seeded([(3,), (2,), (2,)], 11, lr=0.05, momentum=0.9, weight_decay=0.05,
                       none_when=[None, lambda t: t < 5, lambda t: True])),
    case("float32_parameters", call=lockstep,
         inputs=seeded([(3, 2), (4,)], 12, dtype=torch.float32, lr=0.05, momentum=0.9, dampening=0.1,
                       weight_decay=0.01)),
    case("training_loop", call=training_loop,
         inputs=training_inputs(13, steps=20, zero_in_place=False, lr=0.05, momentum=0.9, nesterov=True,
                                weight_decay=1e-3)),
    case("grads_zeroed_in_place", call=training_loop,
         inputs=training_inputs(14, steps=20, zero_in_place=True, lr=0.05, momentum=0.9, dampening=0.1)),

    case("random", "random", call=lockstep, inputs=random_inputs, sizes=[1, 4, 16, 64], seeds=2),
]
