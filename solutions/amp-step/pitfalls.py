"""Known-wrong versions of train_amp. Each is a whole loop a learner could plausibly write; they
share one loop, ``_loop``, and differ in the options each gets wrong (grind_kit.Deltas: every
pitfall's ``"delta"`` is a dict of options). Deltas that set different options compose into one
loop making both mistakes; ``combine`` returns None when two set the same option.

Four of them crash rather than compute wrong numbers, because the scaler the judge hands over
is a real torch.amp.GradScaler, and GradScaler refuses those orders itself: unscale_() with no
scale set because no backward went through scaler.scale() (AssertionError), a second unscale_()
before update() (RuntimeError), update() with no inf check recorded since the last one
(AssertionError), unscale_() or step() after a step() that no update() followed (RuntimeError).
Their verdicts say what GradScaler's message means for the loop.
"""

import torch

from grind_kit import Deltas


def _clip(model, max_norm, how):
    """The clipping step as each mistake writes it ("global" is clip_grad_norm_ itself)."""
    params = [p for p in model.parameters() if p.grad is not None]
    if how == "global":
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    elif how == "per-tensor":
        for p in params:
            torch.nn.utils.clip_grad_norm_(p, max_norm)   # one norm per tensor, not one for all
    elif how == "value":
        torch.nn.utils.clip_grad_value_(model.parameters(), max_norm)   # each entry to [-c, c]
    elif how == "raise":
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=True)
    elif how == "ratio":
        total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(p.grad) for p in params]))
        coef = torch.clamp(total, max=max_norm) / total   # 0 / 0 on a zero gradient
        for p in params:
            p.grad.mul_(coef)


def _loop(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm, *,
          divide=True, unscale="group", clip_scaled=False, update="group", direct_step=False,
          zero="group", schedule="taken", scaled_backward=True, clip="global", update_first=False):
    if zero == "group":
        optimizer.zero_grad()
    for i, (x, y) in enumerate(microbatches):
        if zero == "microbatch":
            optimizer.zero_grad()                    # wipes the group's earlier microbatches
        loss = loss_fn(model(x), y)
        if divide:
            loss = loss / accum_steps
        if scaled_backward:
            scaler.scale(loss).backward()
        else:
            loss.backward()                          # the scaler never sees the loss: no scale set
        last = (i + 1) % accum_steps == 0
        if unscale == "microbatch":
            scaler.unscale_(optimizer)               # GradScaler refuses the second one
        if not last:
            if update == "microbatch":
                scaler.update()                      # no inf check recorded yet: GradScaler refuses
            if schedule == "microbatch":
                scheduler.step()
            continue
        if clip_scaled:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)   # still S times too large
        elif unscale == "group":
            scaler.unscale_(optimizer)
            _clip(model, max_norm, clip)
        else:
            _clip(model, max_norm, clip)
        before = scaler.get_scale()
        if update_first:
            scaler.update()        # resets the per-optimizer state: step() unscales a second time
        if direct_step:
            if clip_scaled or unscale == "none":
                scaler.unscale_(optimizer)
            optimizer.step()                          # bypasses the scaler's inf check
        else:
            scaler.step(optimizer)
        if update != "never" and not update_first:
            scaler.update()
        after = scaler.get_scale()
        if schedule == "taken" and after >= before:
            scheduler.step()
        elif schedule == "always":
            scheduler.step()
        elif schedule == "unchanged" and after == before:
            scheduler.step()
        elif schedule == "microbatch":
            scheduler.step()                          # the loop's last line, after the update branch
        if zero == "group":
            optimizer.zero_grad()


def _implementation(options):
    def train_amp(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm):
        _loop(model, microbatches, loss_fn, optimizer, scaler, scheduler, accum_steps, max_norm, **options)
    return train_amp


MISTAKES = Deltas.on_options(_implementation)
combine = MISTAKES.combine

# The pairs grind runs together to name a loop that makes two mistakes at once: the ones real
# loops make (a tutorial loop without the division or the skip check, a loop written without
# accumulation in mind). Pairs with a crashing pitfall are left out: the crash hides the other.
COMBINE = [
    ("loss-not-divided", "scheduler-on-skipped-step"),
    ("loss-not-divided", "clip-scaled-grads"),
    ("loss-not-divided", "zero-grad-every-microbatch"),
    ("loss-not-divided", "scheduler-every-microbatch"),
    ("clip-scaled-grads", "scheduler-on-skipped-step"),
    ("clip-scaled-grads", "scheduler-misses-growth"),
    ("clip-scaled-grads", "zero-grad-every-microbatch"),
    ("zero-grad-every-microbatch", "scheduler-on-skipped-step"),
    ("zero-grad-every-microbatch", "scheduler-every-microbatch"),
    ("never-zero-grad", "scheduler-on-skipped-step"),
    ("optimizer-step-bypasses-scaler", "scheduler-on-skipped-step"),
    ("optimizer-step-bypasses-scaler", "clip-scaled-grads"),
    ("per-tensor-clipping", "scheduler-on-skipped-step"),
    ("per-tensor-clipping", "loss-not-divided"),
]

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "clip-scaled-grads",
        "name": "clipping the scaled gradients",
        "delta": {"clip_scaled": True},
        "explanation": "clip_grad_norm_ ran before unscale_, on gradients still multiplied by the loss scale S. "
                       "Their norm is S times the true norm, so it was compared with max_norm at the wrong "
                       "scale: with S = 1024 and max_norm = 1 the clip brought the scaled norm down to 1, and "
                       "after scaler.step divided by S the update had a true norm of 1/1024 (in the worked "
                       "example the first step saw about 0.000225 instead of 0.2308), and a group whose true "
                       "norm was below max_norm was clipped anyway. Unscale first, then clip: max_norm is a "
                       "threshold in true units.",
        "hint": "Call scaler.unscale_(optimizer) after the group's last backward and before "
                "clip_grad_norm_; scaler.step then knows not to divide again.",
    },
    {
        "slug": "unscale-per-microbatch",
        "name": "unscale_ after every microbatch",
        "delta": {"unscale": "microbatch"},
        "explanation": "scaler.unscale_(optimizer) ran after each microbatch's backward. GradScaler allows one "
                       "unscale_ per optimizer between two update() calls and raises RuntimeError (\"unscale_() "
                       "has already been called on this optimizer since the last update()\") on the second "
                       "microbatch of a group. The refusal protects the gradients: a second division would "
                       "divide the earlier microbatches' share by S again, mixing gradients in two different "
                       "units. Accumulate the scaled gradients of the whole group and unscale once, after "
                       "its last backward.",
        "hint": "Move unscale_ inside the branch that runs once per group, after the last microbatch's "
                "backward and before clipping.",
    },
    {
        "slug": "backward-not-scaled",
        "name": "loss.backward() instead of scaler.scale(loss).backward()",
        "delta": {"scaled_backward": False},
        "explanation": "The loop called loss.backward() on the unscaled loss and then handed the optimizer "
                       "to the scaler (unscale_, step, update). A GradScaler creates its scale tensor lazily, "
                       "at the first scaler.scale(...) call; without one, unscale_ has no scale to divide by "
                       "and GradScaler stops with AssertionError (\"Attempted unscale_ but _scale is None\"). "
                       "Even if it went through, the gradients were never multiplied by S: small float16 "
                       "gradients underflow to zero, the very thing loss scaling exists to prevent, and "
                       "unscale_ would divide unscaled gradients by S. Scale the loss before every backward.",
        "hint": "Replace loss.backward() with scaler.scale(loss).backward(), for every microbatch.",
    },
    {
        "slug": "update-per-microbatch",
        "name": "scaler.update() between microbatches",
        "delta": {"update": "microbatch"},
        "explanation": "scaler.update() ran after a microbatch that was not the last of its group. update() "
                       "adjusts the scale from what unscale_ or step found, and none had run yet, so GradScaler "
                       "stopped with AssertionError (\"No inf checks were recorded prior to update.\"). Even a "
                       "scaler that allowed it would be wrong: a scale changed in the middle of a group makes "
                       "the next backward add gradients multiplied by a different S into the same .grad, and no "
                       "single division can recover the true sum. One scale for the whole group; update() "
                       "once, after scaler.step.",
        "hint": "Call scaler.update() only in the per-group branch, right after scaler.step(optimizer).",
    },
    {
        "slug": "scheduler-on-skipped-step",
        "name": "the schedule advanced on a skipped step",
        "delta": {"schedule": "always"},
        "library": "timm",
        "convention": True,
        "explanation": "scheduler.step() ran after every group, including the groups whose gradients held inf or "
                       "NaN and whose update scaler.step skipped. The schedule then counts updates that never "
                       "happened, and every later update uses a learning rate one notch further along (in the "
                       "worked example the third group would use 0.025 instead of 0.05). timm's train.py does "
                       "this by design (lr_scheduler.step_update counts every attempted update), and PyTorch "
                       "Lightning's automatic optimisation with native AMP does it too (issue #16228); torch's "
                       "own schedulers warn \"Detected call of lr_scheduler.step() before optimizer.step()\" "
                       "when it happens on the first step. This exercise's schedule counts updates that really "
                       "happened.",
        "hint": "Remember scaler.get_scale() before scaler.step; after scaler.update() the scale is smaller "
                "exactly when the step was skipped, and only then leave the scheduler alone.",
    },
    {
        "slug": "scheduler-misses-growth",
        "name": "the schedule not advanced when the scale grew",
        "delta": {"schedule": "unchanged"},
        "explanation": "The scheduler stepped only when the scale was the same before and after update(). A "
                       "skipped step does shrink the scale, but a real step can change it too: after "
                       "growth_interval clean steps in a row update() multiplies it by growth_factor. Those "
                       "updates happened and the schedule missed them. Compare with >= (or look for inf/NaN "
                       "in the unscaled gradients), not ==.",
        "hint": "The step was skipped exactly when the scale went down: step the scheduler when "
                "scaler.get_scale() after update() is >= the scale before scaler.step.",
    },
    {
        "slug": "scheduler-every-microbatch",
        "name": "the schedule advanced on every microbatch",
        "delta": {"schedule": "microbatch"},
        "explanation": "scheduler.step() ran once per microbatch, so the schedule moved accum_steps notches per "
                       "update and decayed accum_steps times too fast. A schedule counts optimizer updates, "
                       "and with accumulation one update takes accum_steps microbatches.",
        "hint": "Step the scheduler in the per-group branch, after scaler.step and scaler.update, and only "
                "when the update was not skipped.",
    },
    {
        "slug": "zero-grad-every-microbatch",
        "name": "zero_grad() before every microbatch",
        "delta": {"zero": "microbatch"},
        "explanation": "optimizer.zero_grad() ran at the top of every microbatch, as in a loop without "
                       "accumulation, so each backward threw away what the group's earlier microbatches had "
                       "added to .grad. Every update used only the last microbatch's gradient (divided by "
                       "accum_steps), and an inf or NaN in an earlier microbatch of the group was wiped "
                       "before anyone could see it, so a step that had to be skipped was taken.",
        "hint": "Zero the gradients once per group: after the step (or before the group's first "
                "backward), never between microbatches of the same group.",
    },
    {
        "slug": "never-zero-grad",
        "name": "gradients never zeroed between groups",
        "delta": {"zero": "never"},
        "explanation": "The gradients were never reset, so each group's gradient was added to the unscaled, "
                       "clipped gradients of all the groups before it, and after the first overflow the inf or "
                       "NaN stayed in .grad for good: every later step was skipped and the scale kept halving. "
                       "backward() always adds into .grad; zero_grad() after each update starts the next "
                       "group's sum from nothing.",
        "hint": "Call optimizer.zero_grad() after every update (skipped or not), or before each group's "
                "first backward.",
    },
    {
        "slug": "forgot-update",
        "name": "scaler.update() never called",
        "delta": {"update": "never"},
        "explanation": "The loop never called scaler.update(). The scale never moved, so an overflow was never "
                       "answered by backing off; and GradScaler keeps track of where each iteration is, so the "
                       "second group's unscale_() (or step()) raised RuntimeError (\"unscale_() is being called "
                       "after step()\"): without update() the scaler still thinks the previous step is in "
                       "progress. Every iteration ends with scaler.update().",
        "hint": "Right after scaler.step(optimizer), call scaler.update(), once per group.",
    },
    {
        "slug": "loss-not-divided",
        "name": "microbatch losses not divided by accum_steps",
        "delta": {"divide": False},
        "explanation": "Each microbatch's mean loss went into backward() as it was, so the accumulated gradient "
                       "was the sum of accum_steps means: accum_steps times the gradient of the group's mean. "
                       "Clipping hides it when the norm is above max_norm, but every unclipped update was "
                       "accum_steps times too large, and the larger scaled gradients overflow float16 sooner. "
                       "Divide each microbatch's loss by accum_steps before scaling it.",
        "hint": "loss = loss_fn(model(x), y) / accum_steps, then scaler.scale(loss).backward().",
    },
    {
        "slug": "optimizer-step-bypasses-scaler",
        "name": "optimizer.step() called directly instead of scaler.step(optimizer)",
        "delta": {"direct_step": True},
        "explanation": "After unscale_ and clipping the loop called optimizer.step() itself. Only "
                       "scaler.step(optimizer) checks what unscale_ found and skips the update when a gradient "
                       "holds inf or NaN; called directly, the optimizer applied the inf/NaN gradient and the "
                       "parameters became inf/NaN for good. update() still read what unscale_ found and backed "
                       "the scale off for the overflowing group, so the scale can look right; but wherever the "
                       "inf/NaN parameters make later gradients non-finite too, every later update backs it "
                       "off again, and the scale ends up lower than in a loop whose bad steps were skipped.",
        "hint": "Replace optimizer.step() with scaler.step(optimizer): it steps only when the gradients are "
                "finite.",
    },
    {
        "slug": "per-tensor-clipping",
        "name": "each tensor clipped by its own norm inside the AMP step",
        "delta": {"clip": "per-tensor"},
        "explanation": "After unscale_, every parameter's gradient was clipped on its own (clip_grad_norm_ called "
                       "once per tensor, or a hand-written loop over p.grad with one norm each). The order around "
                       "the scaler was right, but the clip was not a global one: a tensor with a large gradient "
                       "is scaled down while a small one is left alone, so the update no longer points where the "
                       "gradient did. max_norm is a bound on the norm of all gradients together: one norm over "
                       "every parameter, one factor for all of them.",
        "hint": "Call torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) once per group, with every "
                "parameter at once.",
    },
    {
        "slug": "clip-by-value",
        "name": "clip_grad_value_ instead of clipping the norm",
        "delta": {"clip": "value"},
        "explanation": "The gradients were clipped entry by entry to [-max_norm, max_norm] "
                       "(torch.nn.utils.clip_grad_value_), not rescaled to a global norm of max_norm. Value "
                       "clipping changes the direction of the update (large entries are cut, small ones kept) "
                       "and does not bound the norm: with 12 entries of 1 the norm is still 3.46 when max_norm "
                       "is 1. The statement asks for norm clipping, one factor for every gradient.",
        "hint": "torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm), after unscale_.",
    },
    {
        "slug": "clip-raises-on-overflow",
        "name": "clip_grad_norm_ with error_if_nonfinite=True",
        "delta": {"clip": "raise"},
        "explanation": "The clip was asked to raise on a non-finite norm (error_if_nonfinite=True). In an AMP loop "
                       "an overflowing group is expected: its unscaled gradients hold inf or NaN, and it is "
                       "scaler.step's job to skip it and update()'s to back the scale off. Raising instead stops "
                       "training at the first overflow, which with fp16 happens in the first steps of almost every "
                       "run. Let the clip compute its inf or NaN norm and let the scaler decide.",
        "hint": "Leave error_if_nonfinite at its default (False) inside the AMP step.",
    },
    {
        "slug": "clip-nan-on-zero-gradient",
        "name": "hand-written clip that divides by a zero norm",
        "delta": {"clip": "ratio"},
        "explanation": "The clip was written by hand as min(norm, max_norm) / norm. When a group's gradients are "
                       "all zero that is 0 / 0, and the gradients become NaN after unscale_ has already checked "
                       "them, so scaler.step applies the NaN update and the parameters are lost. "
                       "clip_grad_norm_ computes max_norm / (norm + 1e-6), clamped at 1, which is 1 for a zero "
                       "gradient.",
        "hint": "Use clip_grad_norm_, or max_norm / (total + 1e-6) clamped to at most 1.",
    },
    {
        "slug": "update-before-step",
        "name": "scaler.update() before scaler.step()",
        "delta": {"update_first": True},
        "explanation": "scaler.update() ran before scaler.step(optimizer). update() adjusts the scale from the inf "
                       "check unscale_ recorded and then forgets that this optimizer was unscaled, so step() "
                       "unscales the gradients a second time (divides by the scale again) before stepping: every "
                       "update is the scale times too small, and after an overflow the new, smaller scale "
                       "divides the inf gradients again. The order is unscale_, clip, step, then update.",
        "hint": "scaler.step(optimizer) first, scaler.update() right after it.",
    },
])
