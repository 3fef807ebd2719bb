# redteam6 (false positive, integrity check): training-loop, the reference answer with one common line
# added: a tqdm progress bar over the epochs (tqdm 4.70 is in the project's venv; the child's imports
# allow it). tqdm starts its monitor thread (tqdm.std.TMonitor, a daemon that wakes every 10 s) with the
# first bar and keeps it for the life of the process; integrity.Record.transition() sees a second
# thread in sys._current_frames() when fit() returns and calls it "a thread of yours was still running".
# The thread is tqdm's, changes nothing and only sleeps; the learner cannot stop it short of
# tqdm.monitor_interval = 0 (an attribute write the message does not suggest). disable=True avoids it.
# Expected: PASSED in practice and marks. Observed (2026-12-03): practice PASSED, marks FORBIDDEN
# ('a thread of yours was still running after your function returned'). False positive.
# Same in-process (scratch probe with integrity.baseline()/watch_writes): tqdm and tqdm.auto.trange ->
# ['thread']; 33 other common library uses (jit.trace, fx, func.grad, vmap, checkpoint, weight_norm,
# lr_scheduler, profiler, detect_anomaly, autocast, DataLoader(num_workers=1), matplotlib, ...) -> none.
"""Reference: a complete training loop with tail-safe accumulation, global clipping,
module-aware weight decay, an update-counted warmup + cosine schedule and the best
validation weights kept in memory."""

import copy
import math

import torch
from tqdm import tqdm
from torch import nn

# Parameters owned by these modules are gains and shifts of a normalized activation: no decay.
NORMALIZATION = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
                 nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def decay_groups(model, weight_decay):
    """Two groups, decided by who owns each parameter: biases and normalization parameters
    don't decay, everything else does. Each group says its weight_decay explicitly."""
    decay, exempt, seen = [], [], set()
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            if id(p) in seen or not p.requires_grad:
                continue
            seen.add(id(p))
            (exempt if name == "bias" or isinstance(module, NORMALIZATION) else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": exempt, "weight_decay": 0.0}]


def lr_ratio(update, warmup, total, min_ratio):
    """The multiplier of the peak lr for update number `update` (0-based), counted in updates.
    Warmup counts the update being made, so the first update already moves: 1/warmup, ..., 1.
    The cosine then runs from 1 down to min_ratio, which the very last update reaches."""
    if update < warmup:
        return (update + 1) / warmup
    progress = min(1.0, (update - warmup) / max(1, total - warmup - 1))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    x, y = train
    x_val, y_val = val
    optimizer = make_optimizer(decay_groups(model, weight_decay), lr)

    # The clocks: a microbatch is one forward/backward, an update is one optimizer step. The
    # last microbatch may be short, and so may the last group of microbatches: both are kept.
    starts = list(range(0, len(x), micro_size))
    groups = [starts[i:i + accumulation] for i in range(0, len(starts), accumulation)]
    total_updates = epochs * len(groups)  # epochs * ceil(ceil(n / micro_size) / accumulation)

    best_loss, best_state = math.inf, None
    update = 0
    for _ in tqdm(range(epochs), desc="epochs", leave=False):  # a progress bar
        model.train()  # evaluation switched to eval mode at the end of the previous epoch
        for group in groups:
            # The group's mean loss: every example's loss divided by the group's real size.
            count = sum(len(x[s:s + micro_size]) for s in group)
            optimizer.zero_grad()
            for s in group:
                losses = loss_fn(model(x[s:s + micro_size]), y[s:s + micro_size])
                (losses.sum() / count).backward()  # .grad accumulates the group's gradient
            # Clip only now, after the group's last backward: the norm is of the whole update,
            # over every parameter at once (one global norm keeps the direction).
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            # The schedule advances once per update, and is set before the step that uses it.
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr * lr_ratio(update, warmup, total_updates, min_ratio)
            optimizer.step()
            update += 1

        model.eval()  # dropout off, normalization in inference behaviour
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), y_val).mean().item()
        if val_loss < best_loss:  # strict: on a tie the earlier epoch stays
            best_loss = val_loss
            # A copy: state_dict() returns the live tensors, which the next updates overwrite.
            best_state = copy.deepcopy(model.state_dict())
    return best_state
