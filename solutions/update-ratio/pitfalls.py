"""Known-wrong variants of log_step: whole loggers a learner could plausibly write.

They share one implementation, ``_log_step``, and each pitfall is a *delta* of its keyword options
(grind_kit.Deltas.on_options); two deltas that set different options combine into one logger
making both mistakes. Three are other tools' real conventions carried over (``"library"``,
``"convention": True``): PyTorch Lightning 1.x's rounded gradient norms, the LAMB trust ratio
(timm, apex), and the update:data ratio of Karpathy's makemore lectures."""

import math

import torch
import torch.nn.functional as F

from grind_kit import Deltas


def _norm(tensors):
    return math.sqrt(sum(float(t.double().pow(2).sum()) for t in tensors))


def _log_step(model, batch, optimizer, max_norm, per="group", *, ratio="update", snapshot="copy",
              denominator="before", grad_norm_at="before_clip", aggregate="group", classes="logits", log=math.log):
    x, y = batch
    optimizer.zero_grad()
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    groups = [list(g["params"]) for g in optimizer.param_groups]
    lrs = [g["lr"] for g in optimizer.param_groups]
    params = [p for g in groups for p in g]
    total = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
    if grad_norm_at == "after_clip":
        total = _norm([p.grad for p in params if p.grad is not None])
    elif grad_norm_at == "rounded":  # Lightning 1.x's LightningModule.grad_norm: round(total, 3)
        total = round(total, 3)

    # What each piece is measured on: one list of parameters (with its lr) per ratio reported.
    if per == "parameter":
        pieces = [([p], lr) for g, lr in zip(groups, lrs) for p in g]
    elif aggregate == "whole":
        pieces = [(params, lrs[0])] * len(groups)
    else:
        pieces = list(zip(groups, lrs))

    grads = {id(p): (p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)) for p in params}
    before = {id(p): (p.detach().clone() if snapshot == "copy" else p.detach()) for p in params}
    optimizer.step()

    def one(piece, lr):
        theta = [before[id(p)] for p in piece]
        delta = [p.detach() - before[id(p)] for p in piece]
        if ratio == "gradient":
            return _norm([grads[id(p)] for p in piece]) / _norm(theta)
        if ratio == "predicted":  # the step plain SGD would take, computed before stepping
            return lr * _norm([grads[id(p)] for p in piece]) / _norm(theta)
        if ratio == "makemore":  # log10(std(lr * grad) / std(data)), Karpathy's update:data ratio
            g = torch.cat([grads[id(p)].flatten() for p in piece]) * lr
            data = torch.cat([p.detach().flatten() for p in piece])
            return float((g.std() / data.std()).log10())
        if ratio == "inverse":  # LAMB's trust ratio: ||w|| / ||update||
            return _norm(theta) / _norm(delta)
        size = _norm([p.detach() for p in piece]) if denominator == "after" else _norm(theta)
        return _norm(delta) / size

    if aggregate == "mean" and per == "group":
        ratios = [sum(one([p], lr) for p in piece) / len(piece) for piece, lr in pieces]
    else:
        ratios = [one(piece, lr) for piece, lr in pieces]
    k = logits.shape[-1] if classes == "logits" else int(torch.unique(y).numel())
    return {"loss": loss.item(), "uniform_loss": log(k), "grad_norm": total, "update_ratios": ratios}


def _implementation(options):
    def log_step(model, batch, optimizer, max_norm, per="group"):
        return _log_step(model, batch, optimizer, max_norm, per, **options)
    return log_step


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"  # every subject is one small step: all pairs are cheap
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "gradient-over-weight",
        "name": "the gradient's norm over the weights' norm instead of the update's",
        "delta": {"ratio": "gradient"},
        "explanation": "The ratio was ||grad|| / ||theta||, the size of the gradient (as clipped) against the "
                       "parameters. That number has no learning rate in it and ignores what the optimizer does "
                       "with the gradient (momentum, Adam's normalisation, weight decay), so it cannot say how far "
                       "the parameters moved. The update ratio is ||theta_after - theta_before|| / "
                       "||theta_before|| over the step that was really taken.",
        "hint": "Copy the parameters before optimizer.step(), and divide the norm of (after - before) by the "
                "norm of before.",
    },
    {
        "slug": "grad-norm-after-clipping",
        "name": "the gradient norm measured after clipping",
        "delta": {"grad_norm_at": "after_clip"},
        "explanation": "The logged gradient norm was measured after clipping, so whenever clipping was active it "
                       "read max_norm (a hair under it) instead of the real size of the gradient: a run whose raw "
                       "gradient is exploding logs a flat line. The number to log is the norm before clipping, "
                       "which is what clip_grad_norm_ returns.",
        "hint": "Keep the value clip_grad_norm_ returns (or measure before calling it), not a norm taken afterwards.",
    },
    {
        "slug": "predicted-update",
        "name": "the update predicted as lr * grad before the step",
        "delta": {"ratio": "predicted"},
        "explanation": "The update was computed before the step as lr * grad, the step plain SGD would take. "
                       "With momentum the step also carries the velocity, with Adam it is lr * m_hat / "
                       "(sqrt(v_hat) + eps), and weight decay adds its own shrinkage: the real step can be "
                       "much larger or smaller than lr * ||grad||. Measure the movement the optimizer made.",
        "hint": "Snapshot the parameters, call optimizer.step(), then compare: the update is after - before.",
    },
    {
        "slug": "snapshot-not-copied",
        "name": "the 'before' parameters kept without a copy",
        "delta": {"snapshot": "alias"},
        "explanation": "The parameters before the step were kept as views (p.detach() or p.data without "
                       ".clone()). optimizer.step() updates the parameters in place, so the 'before' tensors "
                       "changed with them, after - before was 0, and every ratio came out 0.",
        "hint": "Take p.detach().clone() before the step.",
    },
    {
        "slug": "whole-model-ratio",
        "name": "one ratio for the whole model instead of one per group",
        "delta": {"aggregate": "whole"},
        "explanation": "Every group got the same number, the ratio of the whole model's update to the whole "
                       "model's norm. Large weight matrices dominate that number, so a group of biases or norm "
                       "gains that moves far too much (or not at all) is invisible in it. The ratio is "
                       "measured for each param group on its own parameters.",
        "hint": "For each group in optimizer.param_groups, take the norm of the update and of the parameters "
                "over that group's parameters only.",
    },
    {
        "slug": "mean-of-parameter-ratios",
        "name": "a group's ratio as the mean of its parameters' ratios",
        "delta": {"aggregate": "mean"},
        "explanation": "A group's ratio was the average of the ratios of its parameters. A group's ratio treats "
                       "the group as one vector: the norm of all its updates together over the norm of all its "
                       "parameters together, so a small tensor with a large ratio weighs as much as its size, "
                       "not as much as a whole matrix.",
        "hint": "Sum the squared update norms and the squared parameter norms over the group first, then take "
                "the square roots and divide.",
    },
    {
        "slug": "ratio-over-new-weights",
        "name": "the update divided by the parameters after the step",
        "delta": {"denominator": "after"},
        "explanation": "The update's norm was divided by the norm of the parameters after the step. The ratio "
                       "compares the step with where it started, ||theta_before||: ten percent means the step "
                       "moved the parameters by a tenth of the size they had.",
        "hint": "Divide by the norm of the copy taken before optimizer.step().",
    },
    {
        "slug": "log2-classes",
        "name": "log2 K instead of ln K",
        "delta": {"log": math.log2},
        "explanation": "The uniform-guess loss was log2(K): 3.322 for ten classes. cross_entropy uses the natural "
                       "logarithm, so a uniform guess scores ln K = 2.303 for ten classes; compared with log2 K a "
                       "healthy start looks 30% too good.",
        "hint": "math.log(K), the natural logarithm.",
    },
    {
        "slug": "classes-from-labels",
        "name": "K counted from the labels in the batch",
        "delta": {"classes": "labels"},
        "explanation": "K was the number of distinct labels in the batch. A batch rarely holds every class (one "
                       "example holds one), so K came out too small; the model guesses among all its outputs, "
                       "and K is the number of logits, logits.shape[-1].",
        "hint": "K = logits.shape[-1].",
    },
    {
        "slug": "lightning-rounded-grad-norm",
        "name": "the gradient norm rounded to 3 decimals (PyTorch Lightning 1.x)",
        "library": "PyTorch Lightning 1.x (LightningModule.grad_norm, Trainer(track_grad_norm=2))",
        "convention": True,
        "delta": {"grad_norm_at": "rounded"},
        "explanation": "The gradient norm was rounded to three decimals, as PyTorch Lightning 1.x's "
                       "LightningModule.grad_norm did for the 'grad_2.0_norm_total' it logged (round(total_norm, "
                       "3)). Lightning measured it before clipping, as here, but the rounding throws away what a "
                       "small gradient says (a norm of 0.0004 logs as 0.0). Lightning 2's "
                       "lightning.pytorch.utilities.grad_norm no longer rounds. Log the norm as it is.",
        "hint": "Return float(norm) without rounding.",
    },
    {
        "slug": "lamb-trust-ratio",
        "name": "the ratio upside down (LAMB's trust ratio)",
        "library": "LAMB optimizers (timm.optim.Lamb, apex FusedLAMB)",
        "convention": True,
        "delta": {"ratio": "inverse"},
        "explanation": "The ratio was ||theta|| / ||update||, the other way up. That is LAMB's trust ratio "
                       "(timm.optim.Lamb, apex's FusedLAMB: the weight norm over the norm of the Adam update), "
                       "which scales the step so that it stays a fixed fraction of the weights. The playbook's "
                       "update ratio is the fraction itself, ||update|| / ||theta||: 0.1 means the step moved the "
                       "parameters by ten percent of their norm, where the trust ratio would read 10.",
        "hint": "Put the update's norm on top: norm(after - before) / norm(before).",
    },
    {
        "slug": "makemore-update-to-data",
        "name": "log10 of std(lr * grad) / std(data) (Karpathy's makemore update:data ratio)",
        "library": "Andrej Karpathy's makemore lectures (nn-zero-to-hero, part 3)",
        "convention": True,
        "delta": {"ratio": "makemore"},
        "explanation": "The ratio was log10(std(lr * grad) / std(data)), the update:data ratio of Karpathy's "
                       "makemore lecture, where about -3 (a thousandth) is the healthy value. It differs three "
                       "ways: it is a log10, it uses standard deviations (centred, divided by n - 1) instead of "
                       "norms, and lr * grad is the update only for plain SGD. This exercise logs "
                       "||theta_after - theta_before|| / ||theta_before|| of the real step, not its logarithm.",
        "hint": "No log and no std: norm(after - before) / norm(before), from copies taken around the real step.",
    },
])
