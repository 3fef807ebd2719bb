"""Cases for exact-resume.

The learner writes ``save_state(run) -> state`` and ``load_state(run, state)``. This file owns
everything else: a small training run (model with BatchNorm and dropout, AdamW, a warmup-cosine
LambdaLR, a GradScaler, a sampler shuffled by epoch, augmentation drawn from numpy's and
Python's global generators), the loop, and the interruption.

Each case, inside the learner's process:

1. runs the whole job without interruption, keeping only its number of steps (its
   observations are the answer, and the learner's process must never hold the answer);
2. runs it again and, after step ``save_after``, calls ``save_state(run)`` and keeps the state
   in memory; trains ``lost_steps`` more steps (work a crash then throws away), drops that run;
3. builds every object afresh, as a restarted script would (same seeds, so the fresh model has
   the initial weights and the generators are back at the start), calls
   ``load_state(fresh_run, state)`` and trains until ``updates`` successful updates are done.

It observes the interrupted run's trajectory (steps before the save from the first run, the
rest from the resumed one); the parent compares it exactly with the reference's, which
tests/test_exact_resume.py proves is the uninterrupted run bit for bit. Nothing the learner
returns leaves the process: the observations are tensors and numbers this file records itself.

A step is one batch. When the scaled gradients do not fit in float16 (a value above 65504, the
way an fp16 backward pass would overflow), they become inf, GradScaler skips the optimizer
step and backs the scale off, and the step is not an update: the scheduler and the update
counter only advance on updates (a skipped step changed no weights, so it is no update).
"""

import copy
import math
import random

import numpy as np
import torch
from torch import nn

from grind_kit import case, flat

# The first torch.optim.AdamW (and LambdaLR) in a process imports torch._dynamo, over a second.
# Doing it while the checks load keeps that out of the learner's time limit.
_warm = torch.optim.AdamW([torch.zeros(1, requires_grad=True)], lr=0.1)
torch.optim.lr_scheduler.LambdaLR(_warm, lambda u: 1.0)
del _warm

FP16_MAX = 65504.0
MAX_STEPS = 200  # a guard: no case needs more than a few dozen steps, even resumed wrongly


class EpochSampler:
    """The order of one epoch: a permutation drawn from ``seed + epoch``, as
    ``torch.utils.data.DistributedSampler(shuffle=True)`` draws it on a single replica.
    ``set_epoch(epoch)`` chooses the epoch; without it every epoch repeats epoch 0's order."""

    def __init__(self, n, seed):
        self.n = n
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        gen = torch.Generator().manual_seed(self.seed + self.epoch)
        return iter(torch.randperm(self.n, generator=gen).tolist())

    def __len__(self):
        return self.n


class Run:
    """What a training run holds. The objects (model, optimizer, scheduler, scaler, sampler)
    are restored in place; the numbers are plain attributes."""

    def __repr__(self):
        return (f"Run(update={self.update}, epoch={self.epoch}, batch={self.batch}, "
                f"best_loss={self.best_loss})")


def _model(cfg):
    d, h = cfg["features"], cfg["hidden"]
    layers = [nn.Linear(d, h), nn.BatchNorm1d(h), nn.Tanh()]
    if cfg["dropout"]:
        layers.append(nn.Dropout(cfg["dropout"]))
    layers.append(nn.Linear(h, 1))
    return nn.Sequential(*layers).double()


def _data(cfg):
    """Training and validation sets from their own generator (never the global ones). The
    validation targets are shifted, so validation loss stops improving partway through."""
    gen = torch.Generator().manual_seed(1000 + cfg["seed"])
    d, n = cfg["features"], cfg["batches"] * cfg["batch_size"]
    w = torch.randn(d, 1, generator=gen, dtype=torch.float64)
    x = torch.randn(n, d, generator=gen, dtype=torch.float64)
    y = torch.tanh(x @ w) + 0.3 * torch.randn(n, 1, generator=gen, dtype=torch.float64)
    xv = torch.randn(8, d, generator=gen, dtype=torch.float64)
    yv = torch.tanh(xv @ w) + cfg["val_shift"]
    return x, y, xv, yv


def _lr_factor(cfg):
    warmup, total, floor = cfg["warmup"], cfg["updates"], 0.1

    def factor(u):  # u successful updates done so far
        if u < warmup:
            return (u + 1) / warmup
        progress = min(1.0, (u - warmup) / max(1, total - warmup))
        return floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def build(cfg):
    """Everything a run holds, built the way a training script builds it at start-up."""
    torch.manual_seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    random.seed(cfg["seed"])
    run = Run()
    run.model = _model(cfg)
    run.optimizer = torch.optim.AdamW(run.model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    run.scheduler = torch.optim.lr_scheduler.LambdaLR(run.optimizer, _lr_factor(cfg))
    run.scaler = torch.amp.GradScaler("cpu", init_scale=cfg["init_scale"], growth_interval=cfg["growth_interval"])
    run.sampler = EpochSampler(cfg["batches"] * cfg["batch_size"], cfg["seed"])
    run.update = 0  # successful optimizer updates so far
    run.epoch = 0  # the epoch being read
    run.batch = 0  # the next batch to read in that epoch
    run.best_loss = math.inf  # the lowest validation loss seen at an epoch's end
    run.best_state = None  # the model's state_dict (a copy) when that loss was seen
    return run


class Recorder:
    def __init__(self):
        self.rows = {key: [] for key in STEP_KEYS}
        self.val, self.best = [], []

    def cut(self, steps, evals):
        """Forget everything after the first ``steps`` steps and ``evals`` evaluations."""
        for key in self.rows:
            del self.rows[key][steps:]
        del self.val[evals:]
        del self.best[evals:]


STEP_KEYS = ("update counter per step", "batch per step", "lr per step", "loss scale per step", "loss per step",
             "model per step")


def _state_tensors(model):
    return [v for v in model.state_dict().values() if v.is_floating_point()]


def train_step(run, objects, data, cfg, rec):
    """One batch, the way the harness always trains. ``objects`` are the references taken when
    the run was built: load_state must restore them in place, not replace them."""
    model, optimizer, scheduler, scaler, sampler = objects
    x_all, y_all, xv, yv = data
    size = cfg["batch_size"]
    if run.batch == 0:
        sampler.set_epoch(run.epoch)  # a new epoch begins: choose its order
    order = list(sampler)
    idx = order[run.batch * size:(run.batch + 1) * size]
    x, y = x_all[idx].clone(), y_all[idx]
    if cfg["noise"]:  # augmentation from numpy's global generator
        x = x + torch.from_numpy(np.random.normal(0.0, cfg["noise"], size=tuple(x.shape)))
    if cfg["feature_drop"]:  # augmentation from Python's global generator
        x[:, random.randrange(x.shape[1])] = 0.0
    model.train()
    lr = optimizer.param_groups[0]["lr"]
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    with torch.no_grad():
        for p in model.parameters():  # what a float16 backward pass would have stored
            p.grad[p.grad.abs() > FP16_MAX] = math.inf
    overflow = any(not bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    scaler.step(optimizer)  # skipped by the scaler itself when it finds inf
    scaler.update()
    if not overflow:
        scheduler.step()  # the schedule and the counter follow successful updates only
        run.update += 1
    run.batch += 1
    rec.rows["batch per step"].append(list(idx))
    rec.rows["update counter per step"].append(run.update)
    rec.rows["lr per step"].append(lr)
    rec.rows["loss scale per step"].append(scaler.get_scale())
    rec.rows["loss per step"].append(float(loss.detach()))
    rec.rows["model per step"].append(flat(_state_tensors(model)))
    if run.batch == cfg["batches"]:  # the epoch is over: validate, keep the best weights
        model.eval()
        with torch.no_grad():
            val = float(nn.functional.mse_loss(model(xv), yv))
        model.train()
        if val < run.best_loss:
            run.best_loss = val
            run.best_state = copy.deepcopy(model.state_dict())
        rec.val.append(val)
        rec.best.append(run.best_loss)
        run.epoch += 1
        run.batch = 0


def _objects(run):
    return run.model, run.optimizer, run.scheduler, run.scaler, run.sampler


def _train(run, objects, data, cfg, rec, steps_done, stop):
    while not stop(run, steps_done):
        if steps_done >= MAX_STEPS:
            break
        train_step(run, objects, data, cfg, rec)
        steps_done += 1
    return steps_done


def _finish(cfg):
    return lambda run, steps: run.update >= cfg["updates"]


def _observations(rec, run):
    obs = {key: (torch.stack(rows) if key == "model per step" else rows) for key, rows in rec.rows.items()}
    obs["val loss per epoch"] = rec.val
    obs["best val loss per epoch"] = rec.best
    best = run.best_state
    obs["best weights at the end"] = flat([v for v in best.values() if v.is_floating_point()]) \
        if best is not None else torch.zeros(0, dtype=torch.float64)
    return obs


_LENGTHS = {}
# Where a case interrupts its run: read by resume() only, never by the run itself.
INTERRUPTION = ("save_after", "lost_steps")


def uninterrupted_length(cfg):
    """How many steps the run takes without interruption (overflow-skipped steps included), so a
    resumed run is never observed for longer. Only the count is kept: the uninterrupted run's
    observations are the answer, and nothing in the learner's process may hold the answer (the
    parent compares the resumed run with the reference's, exactly).

    Kept per training run, not per case: cases that interrupt the same run at different steps
    (worked_example, epoch_boundary, during_warmup) share one uninterrupted run instead of
    training it again each (five runs for the seven cases, not seven)."""
    key = tuple(sorted((k, v) for k, v in cfg.items() if k not in INTERRUPTION))
    if key not in _LENGTHS:
        run = build(cfg)
        _LENGTHS[key] = _train(run, _objects(run), _data(cfg), cfg, Recorder(), 0, _finish(cfg))
    return _LENGTHS[key]


def resume(subject, **cfg):
    """The case's call: save after step ``save_after``, lose ``lost_steps``, resume afresh."""
    length = uninterrupted_length(cfg)
    data = _data(cfg)
    first = build(cfg)
    rec = Recorder()
    steps = _train(first, _objects(first), data, cfg, rec, 0, lambda run, s: s > cfg["save_after"])
    evals = len(rec.val)
    state = subject.save_state(first)
    _train(first, _objects(first), data, cfg, rec, steps, lambda run, s: s >= cfg["save_after"] + 1 + cfg["lost_steps"])
    del first  # the crash
    rec.cut(steps, evals)
    fresh = build(cfg)  # a new process: same seeds, fresh objects
    objects = _objects(fresh)
    subject.load_state(fresh, state)
    # until the update counter reaches cfg["updates"], and never longer than the run it replaces
    _train(fresh, objects, data, cfg, rec, steps, lambda run, s: run.update >= cfg["updates"] or s >= length)
    return _observations(rec, fresh)


def _entries(inputs):
    """Name the pieces of a model row: "0.weight[2, 1]" instead of an offset."""
    with torch.random.fork_rng():
        model = _model(inputs)
    pieces = [(name, list(t.shape)) for name, t in model.state_dict().items() if t.is_floating_point()]
    return {"model per step": pieces, "best weights at the end": pieces}


BASE = dict(seed=0, features=3, hidden=4, batches=3, batch_size=4, dropout=0.25, noise=0.05, feature_drop=True,
            lr=0.05, warmup=3, updates=12, init_scale=2.0 ** 13, growth_interval=3, val_shift=0.3,
            save_after=4, lost_steps=2)


def config(**changes):
    unknown = set(changes) - set(BASE)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}")
    cfg = {**BASE, **changes}
    return lambda: dict(cfg)


CASES = [
    # mid-epoch (epoch 1, before its last batch), just after warmup; the statement walks through it
    case("worked_example", "example", inputs=config(), call=resume, entries=_entries,
         shown=["update counter per step", "lr per step", "loss scale per step", "val loss per epoch"]),
    # at an epoch boundary: the loop itself calls set_epoch for the next epoch
    case("epoch_boundary", inputs=config(save_after=5), call=resume, entries=_entries),
    # during warmup, inside epoch 0
    case("during_warmup", inputs=config(save_after=1, lost_steps=3), call=resume, entries=_entries),
    # only dropout draws random numbers (torch's generator)
    case("dropout_only", inputs=config(seed=1, noise=0.0, feature_drop=False, save_after=7), call=resume,
         entries=_entries),
    # only the augmentation draws random numbers (numpy's and Python's generators)
    case("augmentation_only", inputs=config(seed=2, dropout=0.0, save_after=7), call=resume, entries=_entries),
    # at the end of epoch 2, one clean step before the scale grows into an overflow (step 10)
    case("before_a_backoff", inputs=config(seed=1, save_after=8, lost_steps=1), call=resume,
         entries=_entries),
    # late in the cosine decay, mid-epoch in epoch 3
    case("late_resume", inputs=config(seed=2, lr=0.1, save_after=10, lost_steps=1), call=resume,
         entries=_entries),
    # saved right after the very first step: the counters barely moved, the generators already have
    case("after_the_first_step", inputs=config(save_after=0, lost_steps=2), call=resume, entries=_entries),
    # saved right after a step the scaler skipped (the overflow of before_a_backoff), the scale
    # just halved and the update counter not advanced
    case("after_a_skipped_step", inputs=config(seed=1, save_after=10, lost_steps=1), call=resume,
         entries=_entries),
    # saved mid-streak of clean steps (growth_interval 4): the scaler's growth count matters
    case("mid_growth_streak", inputs=config(seed=3, growth_interval=4, init_scale=2.0 ** 6, save_after=5,
                                            lost_steps=2), call=resume, entries=_entries),
]
