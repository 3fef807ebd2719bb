"""Known-wrong variants of fit. Each is a whole training loop a learner could plausibly write;
they share one loop, ``_fit``, and each pitfall is a *delta* of its keyword options
(grind_kit.Deltas.on_options). Deltas that set different options compose into one loop making
both mistakes (``combine("drop-tail", "best-aliases-live-weights")``); ``combine`` returns None
when both set the same option. Pitfalls that are a real library's own convention carry
``"library"`` and ``"convention": True``."""

import copy
import math

import torch
from torch import nn

from grind_kit import Deltas

NORMALIZATION = (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d,
                 nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)


def _groups(model, weight_decay, decay):
    if decay == "everything":
        return [{"params": list(model.parameters()), "weight_decay": weight_decay}]
    decayed, exempt = [], []
    for module in model.modules():
        for name, p in module.named_parameters(recurse=False):
            (exempt if name == "bias" or isinstance(module, NORMALIZATION) else decayed).append(p)
    return [{"params": decayed, "weight_decay": weight_decay}, {"params": exempt, "weight_decay": 0.0}]


def _ratio(step, warmup, total, min_ratio):
    """The right multiplier: warmup counts the update being made, the cosine ends on the last update."""
    if step < warmup:
        return (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup - 1))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def _lambda_lr_ratio(step, warmup, total, min_ratio):
    """LambdaLR's / transformers' convention: step / warmup (0 on the first update), and the
    cosine over total - warmup steps, so the last update stops short of min_ratio."""
    if step < warmup:
        return step / max(1, warmup)
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def _nanogpt_ratio(step, warmup, total, min_ratio):
    """nanoGPT's get_lr: warmup (it + 1) / (warmup_iters + 1), so the peak is never reached during
    the warmup; the cosine then runs over lr_decay_iters - warmup_iters (here total - warmup)."""
    if step < warmup:
        return (step + 1) / (warmup + 1)
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))


def _clip_per_tensor(params, max_norm):
    for p in params:
        if p.grad is not None:
            torch.nn.utils.clip_grad_norm_([p], max_norm)


def _fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
         warmup, min_ratio, max_norm, schedule="updates", drop_tail=False, scale="group", copy_best=True,
         eval_mode="switch", decay="module", clip="after_group"):
    x, y = train
    x_val, y_val = val
    optimizer = make_optimizer(_groups(model, weight_decay, decay), lr)
    starts = list(range(0, len(x), micro_size))
    groups = [starts[i:i + accumulation] for i in range(0, len(starts), accumulation)]
    total = epochs * math.ceil(math.ceil(len(x) / micro_size) / accumulation)
    if schedule == "total_floor":  # updates per epoch counted with //, as the HF Trainer does
        total = epochs * max(1, len(starts) // accumulation)
    total_micro = epochs * len(starts)
    update, micro = 0, 0
    best_loss, best_state = math.inf, None
    for _ in range(epochs):
        if eval_mode == "switch":
            model.train()
        for group in groups:
            count = sum(len(x[s:s + micro_size]) for s in group)
            optimizer.zero_grad()
            for s in group:
                losses = loss_fn(model(x[s:s + micro_size]), y[s:s + micro_size])
                if scale == "group":
                    (losses.sum() / count).backward()
                elif scale == "mean_of_means":  # each microbatch's mean, averaged over the group's microbatches
                    (losses.mean() / len(group)).backward()
                else:  # "mean_over_accum": the fixed textbook divisor
                    (losses.mean() / accumulation).backward()
                if clip == "each_backward":
                    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
                micro += 1
            if drop_tail and len(group) < accumulation:
                continue  # the short group's backward ran, as in a modulo loop, but it never steps
            if clip == "after_group":
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            elif clip == "per_tensor":
                _clip_per_tensor(model.parameters(), max_norm)
            if schedule in ("updates", "total_floor"):
                factor = _ratio(update, warmup, total, min_ratio)
            elif schedule == "nanogpt":
                factor = _nanogpt_ratio(update, warmup, total, min_ratio)
            elif schedule == "microbatches":  # the scheduler ticked once per microbatch
                factor = _ratio(micro - 1, warmup, total_micro, min_ratio)
            elif schedule == "total_in_microbatches":
                factor = _ratio(update, warmup, total_micro, min_ratio)
            elif schedule == "lambda_lr":
                factor = _lambda_lr_ratio(update, warmup, total, min_ratio)
            else:  # "one_late": the lr is set after the step, so each update uses the previous value
                factor = None
            if factor is not None:
                for param_group in optimizer.param_groups:
                    param_group["lr"] = lr * factor
            optimizer.step()
            if clip == "after_step":
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if factor is None:
                for param_group in optimizer.param_groups:
                    param_group["lr"] = lr * _ratio(update, warmup, total, min_ratio)
            update += 1
        if eval_mode != "never":
            model.eval()
        with torch.no_grad():
            val_loss = loss_fn(model(x_val), y_val).mean().item()
        if val_loss < best_loss:
            best_loss = val_loss
            best_state = copy.deepcopy(model.state_dict()) if copy_best else model.state_dict()
    return best_state


def _implementation(options):
    def fit(model, train, val, make_optimizer, loss_fn, **config):
        return _fit(model, train, val, make_optimizer, loss_fn, **config, **options)
    return fit


MISTAKES = Deltas.on_options(_implementation)

# Each subject costs a fraction of a second of trusted time: the pairs real loops make, not every pair.
COMBINE = [
    ("schedule-per-microbatch", "drop-tail"),
    ("schedule-per-microbatch", "mean-over-accumulation"),
    ("drop-tail", "mean-over-accumulation"),
    ("best-aliases-live-weights", "eval-in-train-mode"),
    ("best-aliases-live-weights", "schedule-per-microbatch"),
    ("eval-in-train-mode", "decay-everything"),
    ("clip-before-last-backward", "schedule-per-microbatch"),
    ("lambda-lr-warmup", "best-aliases-live-weights"),
]

combine = MISTAKES.combine


PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "schedule-per-microbatch",
        "name": "the schedule counted in microbatches",
        "delta": {"schedule": "microbatches"},
        "explanation": "The warmup and cosine advanced once per microbatch (a scheduler stepped after every "
                       "backward, over epochs * microbatches per epoch), but the learning rate only matters "
                       "when the optimizer steps, once per group. Each update used the value of its group's last "
                       "microbatch: the warmup was over after warmup microbatches, about warmup / accumulation "
                       "updates, and every update saw the schedule jump accumulation places at a time.",
        "hint": "Count updates, not backward calls: keep an update counter that advances right after "
                "optimizer.step(), and size the schedule as epochs * ceil(ceil(n / micro_size) / accumulation).",
    },
    {
        "slug": "total-in-microbatches",
        "name": "the schedule's length counted in microbatches",
        "delta": {"schedule": "total_in_microbatches"},
        "explanation": "The schedule advanced once per update, but its length was epochs * microbatches per epoch, "
                       "accumulation times too long. The cosine was still near its start when training ended, "
                       "so the learning rate never came down to the floor (the num_training_steps mistake: "
                       "len(loader) * epochs with gradient accumulation on).",
        "hint": "With accumulation the run has epochs * ceil(ceil(n / micro_size) / accumulation) updates: "
                "that is the schedule's total.",
    },
    {
        "slug": "lambda-lr-warmup",
        "name": "LambdaLR's warmup: the first update at lr 0",
        "delta": {"schedule": "lambda_lr"},
        "library": "torch LambdaLR with step / warmup (the lr-schedule exercise's multiplier), "
                   "transformers' get_cosine_with_min_lr_schedule_with_warmup",
        "convention": True,
        "explanation": "The multiplier was step / warmup with the cosine over total - warmup steps: the "
                       "convention of a LambdaLR schedule (and of transformers' warmup schedules), where "
                       "the first update is made at lr 0 and the last one stops one step short of the floor. "
                       "This loop counts the update being made: the warmup gives (u + 1) / warmup, so the first "
                       "update already moves, and the cosine reaches min_ratio exactly on the last update, with "
                       "progress (u - warmup) / (total - warmup - 1).",
        "hint": "During warmup use (update + 1) / warmup; after it, progress = (update - warmup) / "
                "max(1, total - warmup - 1).",
    },
    {
        "slug": "lr-one-update-late",
        "name": "the learning rate set after the step",
        "delta": {"schedule": "one_late"},
        "explanation": "The new learning rate was written into the param groups after optimizer.step(), so every "
                       "update used the value meant for the one before: the first update ran at the full peak lr "
                       "(the constructor's), with no warmup at all, and the schedule lagged one update "
                       "behind from then on.",
        "hint": "Set every group's lr for update u before the optimizer.step() of update u.",
    },
    {
        "slug": "drop-tail",
        "name": "dropping the final partial group",
        "delta": {"drop_tail": True},
        "explanation": "The last group of each epoch, with fewer than accumulation microbatches, never produced an "
                       "update: its examples were never learned from, and the run made epochs * "
                       "floor(microbatches / accumulation) updates instead of epochs * ceil(...): 105 instead of "
                       "140 in the worked example, while the schedule still expected 140 and never reached its "
                       "floor.",
        "hint": "Loop over groups (range(0, number of microbatches, accumulation)), so the short last group is "
                "flushed with its own optimizer.step().",
    },
    {
        "slug": "mean-over-accumulation",
        "name": "dividing each microbatch mean by accumulation",
        "delta": {"scale": "mean_over_accum"},
        "explanation": "Each microbatch's mean loss was divided by accumulation. That equals the group's mean only "
                       "when every group holds accumulation microbatches of the same size; the short last "
                       "microbatch and the short last group got the wrong weight (a tail group of one microbatch "
                       "got 1 / accumulation of its gradient).",
        "hint": "Divide each microbatch's loss sum by the number of examples in its whole group.",
    },
    {
        "slug": "clip-before-last-backward",
        "name": "clipping before the group's last backward",
        "delta": {"clip": "each_backward"},
        "explanation": "The gradients were clipped after every backward(), while the group was still being "
                       "accumulated. Each clip only saw a partial sum, and the group's last microbatch was added "
                       "after the last clip, so what the optimizer applied was neither the group's gradient nor a "
                       "clipped one: scaled partial sums plus an unclipped last share, whose global norm can land "
                       "above or below max_norm. Clipping belongs between the group's last backward and the step.",
        "hint": "Call clip_grad_norm_ once per group, after the inner loop over its microbatches, right before "
                "optimizer.step().",
    },
    {
        "slug": "per-tensor-clipping",
        "name": "clipping each tensor separately",
        "delta": {"clip": "per_tensor"},
        "explanation": "Every parameter's gradient was clipped to max_norm on its own. That changes the direction "
                       "of the update (small tensors keep their size, large ones shrink) and lets the overall norm "
                       "reach max_norm times the square root of the number of tensors. Global clipping computes "
                       "one norm over all gradients together and scales them all by the same factor.",
        "hint": "One call over all parameters: torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).",
    },
    {
        "slug": "clip-after-step",
        "name": "clipping after the step (or not at all)",
        "delta": {"clip": "after_step"},
        "explanation": "The gradients were clipped after optimizer.step() had already used them (or never), so no "
                       "update was clipped: the norm the optimizer applied went over max_norm whenever the raw "
                       "gradient did. The clipped gradients were then thrown away by the next zero_grad().",
        "hint": "Clip after the group's last backward and before optimizer.step().",
    },
    {
        "slug": "best-aliases-live-weights",
        "name": "best = model.state_dict() without a copy",
        "delta": {"copy_best": False},
        "explanation": "model.state_dict() returns the model's live tensors, not a copy. The 'best' state kept "
                       "changing with every later update, so what came back were the final weights (the last "
                       "epoch's), not those of the epoch with the best validation loss.",
        "hint": "Keep a copy: copy.deepcopy(model.state_dict()), or {k: v.detach().clone() for k, v in "
                "model.state_dict().items()}.",
    },
    {
        "slug": "eval-in-train-mode",
        "name": "evaluation in train mode",
        "delta": {"eval_mode": "never"},
        "explanation": "The validation loss was computed with the model still in train mode: dropout kept "
                       "dropping features (and a BatchNorm would have used, and updated, batch statistics). "
                       "The validation losses were those of a different network, so the best epoch was chosen "
                       "on the wrong numbers.",
        "hint": "Call model.eval() before the validation forward pass, and model.train() before the next "
                "epoch's training.",
    },
    {
        "slug": "never-back-to-train",
        "name": "model.eval() for validation, never model.train() again",
        "delta": {"eval_mode": "no_return"},
        "explanation": "The model was switched to eval mode for validation and stayed there: every epoch after "
                       "the first trained with dropout off (and a BatchNorm would have frozen its statistics). "
                       "model.eval() is a switch, not a context: it lasts until model.train().",
        "hint": "Call model.train() at the start of every epoch, before its first forward pass.",
    },
    {
        "slug": "decay-everything",
        "name": "weight decay on biases and normalization parameters",
        "delta": {"decay": "everything"},
        "explanation": "All parameters went into one group with weight_decay, biases and LayerNorm's gain and "
                       "shift included. Decaying a norm's gain pulls it toward 0 and fights the normalization; "
                       "the recipe here exempts every bias and every parameter of a normalization layer.",
        "hint": "Two groups by ownership: a parameter registered as 'bias' or owned by a normalization "
                "module gets weight_decay 0.0, everything else weight_decay.",
    },
    {
        "slug": "nanogpt-schedule",
        "name": "nanoGPT's get_lr: warmup (u + 1) / (warmup + 1), cosine over total - warmup",
        "delta": {"schedule": "nanogpt"},
        "library": "nanoGPT (train.py, get_lr)",
        "convention": True,
        "explanation": "The multiplier followed nanoGPT's get_lr: during the warmup (u + 1) / (warmup + 1), so "
                       "the first update runs at lr / (warmup + 1) and the warmup never reaches the peak, then a "
                       "cosine whose progress is (u - warmup) / (total - warmup), which stops one update short "
                       "of min_ratio. Neither is a slip in nanoGPT (its warmup is short next to the run and it "
                       "decays to min_lr over lr_decay_iters), but this exercise's schedule warms up with "
                       "(u + 1) / warmup, reaches the peak on update warmup - 1, and ends exactly at min_ratio "
                       "on the last update.",
        "hint": "ratio(u) = (u + 1) / warmup for u < warmup; progress = (u - warmup) / max(1, total - warmup - 1).",
    },
    {
        "slug": "total-floors-updates-per-epoch",
        "name": "the schedule's length counted with // (the short group left out)",
        "delta": {"schedule": "total_floor"},
        "library": "transformers (Trainer: num_update_steps_per_epoch = len_dataloader // accumulation)",
        "convention": True,
        "explanation": "The schedule's length was epochs * (microbatches per epoch // accumulation): the short "
                       "last group of each epoch was not counted, although the loop does make that update. The "
                       "transformers Trainer has long computed its number of training steps this way. The cosine then "
                       "reaches min_ratio before the run ends and the last updates of the run all sit at the "
                       "floor. Count every group: ceil(ceil(n / micro_size) / accumulation) updates per epoch.",
        "hint": "total = epochs * ceil(ceil(n / micro_size) / accumulation).",
    },
    {
        "slug": "mean-of-microbatch-means",
        "name": "the group's loss as the mean of its microbatches' means",
        "delta": {"scale": "mean_of_means"},
        "explanation": "Each microbatch's mean loss was divided by the number of microbatches in its group, so the "
                       "group's loss was the average of the microbatch means. When the microbatches hold "
                       "different numbers of examples (the epoch's last one is shorter) every example of the "
                       "short microbatch weighs more than the others (the same unequal weighting, there across "
                       "sequences of different token counts, was the gradient-accumulation loss issue the "
                       "transformers Trainer fixed in late 2024). The group's loss is the sum of every "
                       "example's loss divided by the number of examples in the group.",
        "hint": "Backward losses.sum() / examples_in_group for every microbatch of the group.",
    },
])
