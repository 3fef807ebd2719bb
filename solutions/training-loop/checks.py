"""Cases for the training-loop exercise.

The learner writes ``fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size,
accumulation, lr, weight_decay, warmup, min_ratio, max_norm)``. Everything it does is watched
from inside the objects a case hands it:

- ``make_optimizer(groups, lr)`` builds a :class:`RecordingOptimizer`: SGD with AdamW-style
  decoupled weight decay that, at every ``step()``, records the learning rate of its groups, the
  global norm of the gradients it is about to apply (so after the learner's clipping) and, at
  the first step, the weight decay each parameter of the model gets;
- the model starts with a :class:`Probe`, an identity layer that sees every batch the model is
  called on. A batch whose first row belongs to the validation set is an evaluation, whatever
  its shape (the whole set, chunks, or one 1-D row at a time: consecutive validation batches
  are one evaluation): the probe notes whether the model was in train mode and keeps a copy of
  the parameters as they were when it was evaluated. Any other batch is a training forward,
  and the probe counts those made in eval mode;
- the model also holds a :class:`FixedDropout`, a deterministic stand-in for dropout (a fixed
  feature mask with 1/keep scaling in train mode, the identity in eval mode), so that the
  model's mode changes what it computes without any randomness that an alternative correct loop
  could consume in a different order;
- after ``fit`` returns, the parameters in the state dict it returned are compared with the
  copies taken at each evaluation: ``epoch of the returned weights`` is the (1-based) evaluation
  whose parameters they equal, 0 when none.

Every model is a tiny float64 MLP with a LayerNorm, so a case costs milliseconds even over 35
epochs.
"""

import math

import torch
from torch import nn

from grind_kit import RecordingSGD, case, flat

DEFAULT_WEIGHT_DECAY = 0.01  # what a group without its own "weight_decay" gets, as in torch's AdamW
ABSENT = -1.0  # "weight decay per parameter" of a parameter no group lists


class Recorder:
    """What the probe saw. Shared, never copied: a learner who deep-copies the model (to keep
    its best weights) must not split the record in two."""

    def __init__(self, val_x):
        self.val_rows = {tuple(row) for row in val_x.tolist()}
        self.params = []
        self.evaluations = []  # one [parameters, evaluated in train mode] per evaluation
        self.in_evaluation = False
        self.train_forwards_in_eval_mode = 0
        self.train_forwards = 0

    def __deepcopy__(self, memo):
        return self

    def see(self, x, training):
        # Validation is recognised by its first row, whatever shape the learner batches it in:
        # the whole set at once, chunks of rows, or one 1-D row per forward (x[i], which
        # nn.Linear accepts as well), so that row-by-row evaluation is neither missed nor
        # counted as training forwards made in eval mode.
        first = x.reshape(-1, x.shape[-1])[0] if x.dim() >= 1 and x.numel() > 0 else None
        is_val = first is not None and tuple(first.tolist()) in self.val_rows
        if not is_val:
            self.in_evaluation = False
            self.train_forwards += 1
            if not training:
                self.train_forwards_in_eval_mode += 1
            return
        if not self.in_evaluation:  # a new evaluation: the validation set may come in chunks
            self.in_evaluation = True
            with torch.inference_mode(False), torch.no_grad():
                snapshot = torch.cat([p.detach().flatten().clone() for p in self.params])
            self.evaluations.append([snapshot, False])
        if training:
            self.evaluations[-1][1] = True


class Probe(nn.Module):
    """The identity; tells the recorder about every batch (see the module docstring)."""

    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def forward(self, x):
        self.recorder.see(x, self.training)
        return x


class FixedDropout(nn.Module):
    """Dropout without randomness: in train mode the features where ``keep_mask`` is 0 are
    zeroed and the others scaled by 1/keep; in eval mode the identity, like nn.Dropout."""

    def __init__(self, keep_mask):
        super().__init__()
        self.keep_mask = keep_mask  # a plain tensor, neither a parameter nor a buffer
        self.keep = float(keep_mask.mean())

    def forward(self, x):
        if self.training:
            return x * self.keep_mask / self.keep
        return x

    def extra_repr(self):
        return f"keep={self.keep_mask.tolist()}"


class RecordingOptimizer(RecordingSGD):
    """SGD with decoupled weight decay, p <- p - lr * wd * p - lr * grad, for each group with its
    own "lr" and "weight_decay" (a group without "weight_decay" gets 0.01, as in torch's AdamW).
    Takes a list of tensors or of group dicts, like torch; offers param_groups, state, step() and
    zero_grad(set_to_none=True) (the kit's RecordingSGD's, like torch's). Records what the learner's
    loop did with it."""

    def __init__(self, params, lr, model_params):
        params = list(params)
        groups = params if params and isinstance(params[0], dict) else [{"params": params}]
        self.param_groups = []
        for group in groups:
            tensors = group["params"]
            tensors = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
            filled = {"lr": lr, "weight_decay": DEFAULT_WEIGHT_DECAY}
            filled.update(group)
            filled["params"] = tensors
            self.param_groups.append(filled)
        self.defaults = {"lr": lr, "weight_decay": DEFAULT_WEIGHT_DECAY}
        self.state = {}
        self.model_params = model_params
        self.lrs, self.norms, self.decay = [], [], None

    def _record(self):
        live = [g for g in self.param_groups if g["params"]]
        lrs = {float(g["lr"]) for g in live}
        self.lrs.append(lrs.pop() if len(lrs) == 1 else math.nan)
        squares = [p.grad.detach().pow(2).sum() for g in live for p in g["params"] if p.grad is not None]
        self.norms.append(float(torch.stack(squares).sum().sqrt()) if squares else 0.0)
        if self.decay is None:
            by_id = {}
            for g in live:
                for p in g["params"]:
                    by_id.setdefault(id(p), float(g["weight_decay"]))
            self.decay = [by_id.get(id(p), ABSENT) for p in self.model_params]

    @torch.no_grad()
    def step(self, closure=None):
        self._record()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(p.grad, alpha=-group["lr"])


def squared_error(pred, y):
    """One loss per example: the squared error summed over the output features, shape [n]."""
    return ((pred - y) ** 2).sum(dim=-1)


def make_model(recorder, gen, hidden, keep_mask):
    model = nn.Sequential(
        Probe(recorder),
        nn.Linear(2, hidden),
        nn.Tanh(),
        FixedDropout(torch.tensor(keep_mask, dtype=torch.float64)),
        nn.LayerNorm(hidden),
        nn.Linear(hidden, 1),
    ).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("4."):  # LayerNorm: gain near 1, shift near 0
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.2 * torch.randn(p.shape, generator=gen,
                                                                                       dtype=torch.float64))
            else:
                p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.7)
    recorder.params = list(model.parameters())
    return model


def target(x):
    """The function the training targets come from."""
    return torch.sin(1.5 * x[:, :1]) + 0.5 * x[:, 1:]


def case_inputs(seed, *, n, n_val=16, epochs, micro_size, accumulation, lr=0.3, weight_decay=0.1, warmup=2,
                min_ratio=0.1, max_norm=1.0, hidden=8, keep_mask=(1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0), blend=0.5, noise=0.3):
    """Train targets are ``target(x)`` plus noise. Validation targets lie between what the
    untrained model predicts and ``target``, ``blend`` of the way: the validation loss improves
    while training moves toward ``target`` and gets worse once it has gone past, so the best
    epoch is not the last."""
    def inputs(**_):
        gen = torch.Generator().manual_seed(seed)
        x = torch.randn(n, 2, generator=gen, dtype=torch.float64)
        y = target(x) + noise * torch.randn(n, 1, generator=gen, dtype=torch.float64)
        x_val = torch.randn(n_val, 2, generator=gen, dtype=torch.float64)
        recorder = Recorder(x_val)
        model = make_model(recorder, gen, hidden, list(keep_mask)[:hidden])
        with torch.no_grad():
            start = model.eval()(x_val)
        model.train()
        recorder.evaluations.clear()
        y_val = (1 - blend) * start + blend * target(x_val)
        config = dict(epochs=epochs, micro_size=micro_size, accumulation=accumulation, lr=lr,
                      weight_decay=weight_decay, warmup=warmup, min_ratio=min_ratio, max_norm=max_norm)
        problem = Problem(model, (x, y), (x_val, y_val), recorder,
                          f"seed {seed}: {n} train, {n_val} val examples; MLP 2-{hidden}-1 with LayerNorm")
        return {"problem": problem, "config": config}
    return inputs


class Problem:
    """A case's model, data and recorder in one input. A verdict shows an input as text, in full,
    and 400 rows of data would bury the configuration, so it shows this summary instead (grind
    keeps the first 80 characters of what is not data): the seed and sizes the data are drawn
    from (case_inputs) and the model's widths."""

    def __init__(self, model, train, val, recorder, summary):
        self.model, self.train, self.val, self.recorder, self.summary = model, train, val, recorder, summary

    def __str__(self):
        return self.summary

    __repr__ = __str__


def run_fit(subject, problem, config):
    model, train, val, recorder = problem.model, problem.train, problem.val, problem.recorder
    names = [name for name, _ in model.named_parameters()]
    made = []

    def make_optimizer(groups, lr=1e-3):  # AdamW's default lr, in case the loop sets every lr itself
        optimizer = RecordingOptimizer(groups, lr, recorder.params)
        made.append(optimizer)
        return optimizer

    returned = subject.fit(model, train, val, make_optimizer, squared_error, **config)
    if len(made) != 1:
        raise RuntimeError(f"fit must call make_optimizer exactly once, it called it {len(made)} times")
    optimizer = made[0]
    missing = [n for n in names if not hasattr(returned, "keys") or n not in returned]
    if missing:
        raise KeyError(f"the returned state dict has no entry for {missing[0]}")
    weights = flat([returned[n] for n in names])
    epoch = 0
    for index, (snapshot, _) in enumerate(recorder.evaluations):
        if snapshot.shape == weights.shape and torch.equal(snapshot, weights):
            epoch = index + 1
            break
    return {
        "updates": len(optimizer.lrs),
        "lr per step": optimizer.lrs,
        "clipped grad norm per step": optimizer.norms,
        "weight decay per parameter": optimizer.decay or [ABSENT] * len(names),
        "evaluations": len(recorder.evaluations),
        "evaluated in train mode per evaluation": [bool(m) for _, m in recorder.evaluations],
        "training forwards in eval mode": recorder.train_forwards_in_eval_mode,
        "epoch of the returned weights": epoch,
        "returned weights": weights,
    }


def random_inputs(size, seed):
    """A loop drawn from the seed: ``size`` scales the data; micro_size 2 to 6, accumulation 1 to 4,
    2 to 5 epochs, warmup 0 to 3, max_norm from 0.3 to 3."""
    gen = torch.Generator().manual_seed(7919 * size + seed)
    pick = lambda low, high: int(torch.randint(low, high + 1, (), generator=gen))  # noqa: E731
    micro_size, accumulation = pick(2, 6), pick(1, 4)
    n = micro_size * pick(2, 3) * size + pick(1, micro_size)
    return case_inputs(1000 * size + seed, n=n, epochs=pick(2, 5), micro_size=micro_size, accumulation=accumulation,
                       warmup=pick(0, 3), max_norm=[0.3, 1.0, 3.0][pick(0, 2)], blend=0.6)()


CASES = [
    # The course's numbers: 400 examples, microbatches of 37 (10 of 37 and one of 30), groups of
    # 3 (the last holds 2 microbatches), 35 epochs: 35 * ceil(11 / 3) = 140 updates. The best
    # validation loss is at epoch 21.
    case("worked_example", "example", call=run_fit, shown=["updates"],
         inputs=case_inputs(11, n=400, n_val=40, epochs=35, micro_size=37, accumulation=3, lr=0.3, warmup=8,
                            blend=0.8)),
    # 10 examples in microbatches 3, 3, 3, 1; groups {3, 3, 3} and {1}: 2 updates per epoch.
    case("worked_example_schedule", "example", call=run_fit, shown=["updates", "lr per step"],
         inputs=case_inputs(2, n=10, epochs=4, micro_size=3, accumulation=3, lr=0.5, warmup=2)),
    # 23 examples: microbatches 4, 4, 4, 4, 4, 3; groups of 4 and of 2 microbatches (16 and 7 examples).
    case("tail_of_two_microbatches", call=run_fit,
         inputs=case_inputs(3, n=23, epochs=6, micro_size=4, accumulation=4, blend=0.6)),
    # 24 examples, 6 microbatches of 4, 2 full groups: no tail anywhere.
    case("groups_divide_evenly", call=run_fit,
         inputs=case_inputs(4, n=24, epochs=5, micro_size=4, accumulation=3, blend=0.6)),
    # Every microbatch is an update: microbatches and updates are the same clock.
    case("accumulation_of_one", call=run_fit,
         inputs=case_inputs(5, n=17, epochs=5, micro_size=5, accumulation=1, blend=0.6)),
    case("clipping_never_active", call=run_fit,
         inputs=case_inputs(6, n=20, epochs=6, micro_size=3, accumulation=2, lr=0.1, max_norm=1000.0, blend=0.6)),
    case("clipping_every_update", call=run_fit,
         inputs=case_inputs(7, n=20, epochs=6, micro_size=3, accumulation=2, max_norm=0.05, blend=0.6)),
    case("no_warmup", call=run_fit,
         inputs=case_inputs(8, n=21, epochs=6, micro_size=4, accumulation=2, warmup=0, blend=0.6)),
    case("single_epoch", call=run_fit,
         inputs=case_inputs(9, n=30, epochs=1, micro_size=4, accumulation=3, warmup=3, blend=0.6)),
    # The whole training set in one microbatch (micro_size > n): one group, one update per epoch.
    case("one_microbatch_per_epoch", call=run_fit,
         inputs=case_inputs(12, n=7, epochs=5, micro_size=10, accumulation=2, warmup=1, blend=0.6)),
    # accumulation longer than an epoch: each epoch is one short group of 4 microbatches (3, 3, 3, 2).
    case("accumulation_longer_than_an_epoch", call=run_fit,
         inputs=case_inputs(13, n=11, epochs=4, micro_size=3, accumulation=6, warmup=1, blend=0.6)),
    # warmup longer than the run: every update is in the warmup, none reaches the peak.
    case("warmup_longer_than_the_run", call=run_fit,
         inputs=case_inputs(14, n=12, epochs=3, micro_size=4, accumulation=2, warmup=10, blend=0.6)),
    case("random", "random", call=run_fit, inputs=random_inputs, sizes=[1, 2, 4], seeds=2),
]
