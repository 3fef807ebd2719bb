"""Cases for the adam exercise.

Every case runs the subject's optimizer in lockstep with a fixed script of gradients
(``grind_kit.lockstep``: assigned to ``p.grad`` directly, so tiny, huge and missing gradients are
exactly what the case says) and records every parameter after every ``step()``:
``"params per step"`` has shape [steps, total number of entries], so a report names the first
step that went wrong. One case runs the kit's training loop instead (zero_grad, backward, step
on an nn.Linear). The inputs say which entry point to construct (``"optimizer"``: Adam or AdamW).
"""

import torch

from grind_kit import case, lockstep, log_scales, script, seeded, sometimes, training_inputs, training_loop

STEPS = 50


def adam(optimizer, shapes, seed, steps=STEPS, **kwargs):
    """Seeded inputs (grind_kit.seeded) for ``optimizer``, 50 steps unless told otherwise."""
    return seeded(shapes, seed, steps=steps, optimizer=optimizer, **kwargs)


def random_inputs(size, seed):
    """Adam or AdamW (by seed), ``size`` entries split over up to three parameters, per-entry
    gradient scales from 1e-10 to 1e5, weight decay on or off, and one parameter that misses
    its gradient on some steps."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    optimizer = "AdamW" if seed % 2 else "Adam"
    count = min(3, size)
    shapes = [(max(1, size // count),) for _ in range(count)]
    lr = [0.1, 0.01, 0.03][(size + seed) % 3]
    wd = [0.0, 0.1, 0.02][(size + 2 * seed) % 3]
    betas = [(0.9, 0.999), (0.8, 0.99)][(size // 4 + seed) % 2]
    scales = [log_scales(s, 100 * size + seed + i) for i, s in enumerate(shapes)]
    period = 2 + int(torch.randint(0, 4, (), generator=gen))
    none_when = [None] * count
    none_when[-1] = lambda t: t < 3 or t % period == 0
    return adam(optimizer, shapes, 31 * size + seed, steps=60, scales=scales, none_when=none_when,
                lr=lr, betas=betas, weight_decay=wd)()


CASES = [
    # Public: the numbers in the statement. Constant gradients 0.5 and 2: every step is lr.
    case("worked_example_adam", "example", call=lockstep,
         inputs=script([[1.0, 1.0]], [[[0.5, 2.0]]] * 3, optimizer="Adam", lr=0.01)),
    # Public: AdamW shrinks theta = 3 by lr * wd * theta = 0.003 even with a zero gradient.
    case("worked_example_adamw", "example", call=lockstep,
         inputs=script([[3.0, 3.0]], [[[0.0, 0.5]]] * 2, optimizer="AdamW", lr=0.01, weight_decay=0.1)),

    case("tiny_gradients", call=lockstep, inputs=adam("Adam", [(6,)], 1, scales=[1e-10], lr=0.01)),
    case("huge_gradients", call=lockstep, inputs=adam("Adam", [(6,)], 2, scales=[1e5], lr=0.01)),
    case("mixed_gradient_scales", call=lockstep,
         inputs=adam("Adam", [(12,)], 3, scales=[log_scales((12,), 3)], lr=0.01)),
    case("several_parameters", call=lockstep, inputs=adam("Adam", [(2, 3), (4,), ()], 4, lr=0.01)),
    case("one_parameter_sometimes_without_grad", call=lockstep,
         inputs=adam("Adam", [(5,)], 5, lr=0.01, none_when=[sometimes(4, 3)])),
    case("grad_none_and_never_updated", call=lockstep,
         inputs=adam("AdamW", [(3,), (3,), (2,)], 6, lr=0.01, weight_decay=0.1,
                     none_when=[None, sometimes(5, 4), lambda t: True])),
    case("adam_l2_weight_decay", call=lockstep,
         inputs=adam("Adam", [(4,), (3,)], 7, scales=[1.0, 1e-6], lr=0.05, weight_decay=0.1)),
    case("adamw_decoupled_decay", call=lockstep,
         inputs=adam("AdamW", [(4,), (3,)], 8, scales=[1.0, 1e-6], lr=0.1, weight_decay=0.1)),
    case("adam_defaults", call=lockstep, inputs=adam("Adam", [(4,)], 9)),
    case("adamw_defaults", call=lockstep, inputs=adam("AdamW", [(4,)], 10)),
    case("custom_betas_and_eps", call=lockstep,
         inputs=adam("Adam", [(5,)], 11, scales=[1e-3], lr=0.05, betas=(0.8, 0.95), eps=1e-4)),
    case("float32_parameters", call=lockstep,
         inputs=adam("AdamW", [(3, 2), (4,)], 12, dtype=torch.float32, lr=0.01, weight_decay=0.05)),
    case("training_loop", call=training_loop, inputs=training_inputs(13, steps=30, optimizer="AdamW", lr=0.05)),

    case("random", "random", call=lockstep, inputs=random_inputs, sizes=[1, 4, 16, 64], seeds=2),
]
