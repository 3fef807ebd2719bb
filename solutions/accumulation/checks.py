"""Cases for the accumulation exercise.

Each case builds a small float64 model (a Linear layer) and a list of microbatches, hands the
subject the kit's recording SGD optimizer (grind_kit.RecordingSGD), and observes what the
optimizer saw at every step(): how many steps there were and every parameter's gradient at each
one. The SGD update is real (lr > 0), so a wrong early update also changes the gradients of the
later groups.
"""

import torch
import torch.nn.functional as F

from grind_kit import RecordingSGD, case, param_entries

LR = 0.05


def half_squared_error(pred, y):
    """One loss per example (or per token): 0.5 * ||pred - y||^2 over the last dimension."""
    return 0.5 * ((pred - y) ** 2).sum(dim=-1)


def cross_entropy(pred, y):
    """One loss per example (or per token); pred has classes on its last dimension."""
    classes = pred.shape[-1]
    return F.cross_entropy(pred.reshape(-1, classes), y.reshape(-1), reduction="none").reshape(y.shape)


LOSSES = {"half_squared_error": half_squared_error, "cross_entropy": cross_entropy}
D_IN = 2
D_OUT = {"half_squared_error": 1, "cross_entropy": 3}


def make_model(loss, seed):
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Linear(D_IN, D_OUT[loss], dtype=torch.float64)
    with torch.no_grad():
        model.weight.copy_(torch.randn(model.weight.shape, generator=gen, dtype=torch.float64) * 0.5)
        model.bias.copy_(torch.randn(model.bias.shape, generator=gen, dtype=torch.float64) * 0.5)
    return model


def make_targets(loss, shape, gen):
    if loss == "cross_entropy":
        return torch.randint(0, D_OUT[loss], shape, generator=gen)
    return torch.randn(*shape, D_OUT[loss], generator=gen, dtype=torch.float64)


def make_microbatch(loss, n, gen, length=None, lengths=None):
    """(x, y) with n examples, or, when ``length`` is given, (x, y, mask) with n sequences of
    ``length`` positions, right-padded to the valid lengths in ``lengths``. Padded positions hold
    ordinary-looking numbers, so counting them changes the answer."""
    if length is None:
        x = torch.randn(n, D_IN, generator=gen, dtype=torch.float64)
        return (x, make_targets(loss, (n,), gen))
    x = torch.randn(n, length, D_IN, generator=gen, dtype=torch.float64)
    y = make_targets(loss, (n, length), gen)
    mask = torch.arange(length).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    return (x, y, mask)


def case_inputs(sizes, k, loss="half_squared_error", seed=0, masked=None):
    """``masked`` is None for plain microbatches, else one (length, [valid lengths]) per microbatch."""
    def inputs(**_):
        gen = torch.Generator().manual_seed(1234 + seed)
        if masked is None:
            microbatches = [make_microbatch(loss, n, gen) for n in sizes]
        else:
            microbatches = [make_microbatch(loss, n, gen, length, lengths)
                            for n, (length, lengths) in zip(sizes, masked)]
        return {"microbatches": microbatches, "k": k, "loss": loss, "sizes": list(sizes),
                "model": make_model(loss, seed)}
    return inputs


def random_inputs(size, seed):
    """``size`` microbatches of 1 to 6 examples; k from 1 to 4; masked half the time."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    k = 1 + (size + seed) % 4
    loss = "cross_entropy" if (size // 2 + seed) % 2 else "half_squared_error"
    sizes = torch.randint(1, 7, (size,), generator=gen).tolist()
    masked = None
    if (size + seed) % 2:
        masked = []
        for n in sizes:
            length = int(torch.randint(2, 6, (), generator=gen))
            masked.append((length, torch.randint(1, length + 1, (n,), generator=gen).tolist()))
    return case_inputs(sizes, k, loss, seed=100 * size + seed, masked=masked)()


def run_epoch(subject, model, microbatches, k, loss, sizes):
    optimizer = RecordingSGD(model.parameters(), lr=LR)
    subject.train_epoch(model, microbatches, optimizer, k, LOSSES[loss])
    return {"number of steps": optimizer.calls, "grads per step": optimizer.grads_per_step()}


# "grads per step" rows are the model's parameters flattened in order: name them in verdicts.
run_epoch.entries = param_entries("grads per step")


def padded(lengths_per_microbatch, length):
    return [(length, lengths) for lengths in lengths_per_microbatch]


CASES = [
    case("worked_example", "example", inputs=case_inputs([8, 8, 8, 8, 3], k=2), call=run_epoch,
         shown=["number of steps"]),
    case("worked_example_one_group", "example", inputs=case_inputs([8, 8, 3], k=3, seed=1), call=run_epoch,
         shown=["number of steps"]),
    case("equal_sizes_no_tail", inputs=case_inputs([4, 4, 4, 4, 4, 4], k=3, seed=2), call=run_epoch),
    case("tail_of_two_microbatches", inputs=case_inputs([4, 4, 4, 4, 4], k=3, seed=3), call=run_epoch),
    case("unequal_sizes_full_groups", inputs=case_inputs([5, 2, 7, 1], k=2, seed=4), call=run_epoch),
    case("k_equals_one", inputs=case_inputs([3, 5, 2], k=1, seed=5), call=run_epoch),
    case("k_larger_than_the_epoch", inputs=case_inputs([2, 5, 3], k=5, seed=6), call=run_epoch),
    case("single_microbatch", inputs=case_inputs([6], k=4, seed=7), call=run_epoch),
    case("cross_entropy_classifier", inputs=case_inputs([3, 7, 2, 6, 1], k=2, loss="cross_entropy", seed=8),
         call=run_epoch),
    case("masked_tokens",
         inputs=case_inputs([4, 4, 4], k=2, seed=9, masked=padded([[5, 1, 2, 3], [5, 5, 4, 5], [2, 1, 1, 3]], 5)),
         call=run_epoch),
    case("masked_variable_lengths",
         inputs=case_inputs([3, 2, 4, 1, 3, 2, 2], k=3, loss="cross_entropy", seed=10,
                            masked=[(6, [6, 2, 1]), (3, [3, 3]), (4, [1, 4, 2, 2]), (2, [1]),
                                    (5, [5, 3, 1]), (4, [4, 4]), (3, [1, 2])]),
         call=run_epoch),
    case("microbatch_all_padding",
         inputs=case_inputs([2, 3, 2, 2], k=2, seed=11,
                            masked=[(4, [4, 2]), (4, [0, 0, 0]), (3, [3, 1]), (3, [2, 2])]),
         call=run_epoch),
    case("random", "random", inputs=random_inputs, call=run_epoch, sizes=[1, 2, 3, 5, 8, 13, 21], seeds=2),
]
