"""Known-wrong variants of save_state / load_state. Each is a resume a learner could plausibly
write; they share one implementation and differ in the piece they leave out.

Every pitfall is a *delta* (grind_kit.Deltas): options of the shared ``_implementation``.
Deltas that set different options compose into one implementation making both mistakes
(``combine("schedule-restarted", "counter-reset")``). Pitfalls that are a real library's own
behaviour carry ``"library"`` (and ``"convention": True`` when it is documented as intended)."""

import copy
import random

import numpy as np
import torch

from grind_kit import Deltas

EVERY_RNG = ("torch", "numpy", "python")


def _implementation(options):
    model_from = options.get("model", "state_dict")  # "state_dict" | "parameters" | "best"
    keep = {piece: options.get(piece, True) for piece in
            ("optimizer", "scheduler", "scaler", "counter", "best", "set_epoch", "copy")}
    position = options.get("position", "batch")  # "batch" (right) | "epoch" (epoch restarted) | "none"
    rngs = options.get("rng", EVERY_RNG)

    def save_state(run):
        if model_from == "parameters":  # weights without buffers
            model = {name: p for name, p in run.model.named_parameters()}
        else:
            model = run.model.state_dict()
        state = {"model": model, "epoch": run.epoch, "batch": run.batch, "update": run.update,
                 "best_loss": run.best_loss, "best_state": run.best_state}
        if keep["optimizer"]:
            state["optimizer"] = run.optimizer.state_dict()
        if keep["scheduler"]:
            state["scheduler"] = run.scheduler.state_dict()
        if keep["scaler"]:
            state["scaler"] = run.scaler.state_dict()
        if options.get("scaler_scale_only"):
            state["scaler"] = {"scale": run.scaler.get_scale()}  # the number, not the growth streak
        state["rng"] = {
            "torch": torch.get_rng_state(),
            "numpy": np.random.get_state(),
            "python": random.getstate(),
        }
        return copy.deepcopy(state) if keep["copy"] else state

    def load_state(run, state):
        if model_from == "best" and state["best_state"] is not None:
            run.model.load_state_dict(state["best_state"])  # the best-validation weights, not the latest
        else:
            run.model.load_state_dict(state["model"], strict=model_from != "parameters")
        if keep["optimizer"]:
            run.optimizer.load_state_dict(state["optimizer"])
        if keep["scheduler"]:
            run.scheduler.load_state_dict(state["scheduler"])
        if keep["scaler"] and not options.get("scaler_scale_only"):
            run.scaler.load_state_dict(state["scaler"])
        elif options.get("scaler_scale_only"):
            fresh = run.scaler.state_dict()
            run.scaler.load_state_dict({**fresh, "scale": state["scaler"]["scale"], "_growth_tracker": 0})
        if keep["counter"]:
            run.update = state["update"]
        if position in ("batch", "epoch"):
            run.epoch = state["epoch"]
        if position == "batch":
            run.batch = state["batch"]
        if keep["set_epoch"] and position != "none":
            run.sampler.set_epoch(state["epoch"])
        if keep["best"]:
            run.best_loss = state["best_loss"]
            run.best_state = copy.deepcopy(state["best_state"])
        if "torch" in rngs:
            torch.set_rng_state(state["rng"]["torch"])
        if "numpy" in rngs:
            np.random.set_state(state["rng"]["numpy"])
        if "python" in rngs:
            random.setstate(state["rng"]["python"])

    return {"save_state": save_state, "load_state": load_state}


MISTAKES = Deltas.on_options(_implementation)
combine = MISTAKES.combine
COMBINE = [
    ("schedule-restarted", "counter-reset"),
    ("epoch-restarted", "rng-not-restored"),
    ("set-epoch-forgotten", "torch-rng-only"),
    ("scaler-reset", "torch-rng-only"),
    ("live-references", "scaler-reset"),
    ("buffers-forgotten", "schedule-restarted"),
]

_NOTHING_BUT_WEIGHTS = {"optimizer": False, "scheduler": False, "scaler": False, "counter": False,
                        "position": "none", "set_epoch": False, "best": False, "rng": ()}

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "timm-checkpoint",
        "name": "timm's checkpoint: model, optimizer, loss scaler and epoch, resumed at an epoch start",
        "library": "timm (CheckpointSaver / resume_checkpoint)",
        "convention": True,
        "delta": {"scheduler": False, "counter": False, "position": "epoch", "best": False, "rng": ()},
        "explanation": "The checkpoint held what timm's train script saves: the model, the optimizer, the AMP "
                       "loss scaler and the epoch (with the metric), and the run went on from an epoch's first "
                       "batch (timm checkpoints at the end of an epoch and resumes at the next one; saved in "
                       "the middle of one, this restarts it). timm re-derives its schedulers from the epoch "
                       "number, so it keeps no scheduler state, no update counter, no batch position, no random "
                       "generators and no best-so-far record. Here the schedule is a LambdaLR stepped per "
                       "successful update, so it restarts its warmup, and the epoch's batches are read again "
                       "with other random numbers. An exact resume needs all of those too.",
        "hint": "Besides the model, optimizer and scaler: the scheduler's state_dict, run.update, run.epoch and "
                "run.batch, best_loss/best_state and the three generators.",
    },
    {
        "slug": "growth-tracker-reset",
        "name": "only the loss scale's value saved, not the scaler's state",
        "delta": {"scaler": False, "scaler_scale_only": True},
        "explanation": "The loss scale was saved as a number (scaler.get_scale()) and written back into the fresh "
                       "scaler, whose growth tracker starts at 0. GradScaler also counts the clean steps since "
                       "its last change and grows the scale after growth_interval of them; with the count reset "
                       "the resumed run grows the scale later than the uninterrupted one, and the overflows and "
                       "skipped steps that follow fall on other steps. scaler.state_dict() holds the scale and "
                       "the count; save and load it whole.",
        "hint": "state['scaler'] = run.scaler.state_dict(), and run.scaler.load_state_dict(...) when loading.",
    },
    {
        "slug": "weights-only",
        "name": "only the model's weights were saved",
        "delta": _NOTHING_BUT_WEIGHTS,
        "explanation": "The checkpoint held the model and nothing else, so the resumed run started a new "
                       "training process from those weights: AdamW's moments at zero, warmup from the start, "
                       "the update counter at 0, epoch 0's data order from its first batch, the loss scale "
                       "back at its initial value and the random generators wherever the fresh script left "
                       "them. That is what a state_dict saved for inference gives you (as do options such as "
                       "Hugging Face's save_only_model=True, whose documentation warns that such a checkpoint "
                       "cannot resume training). Loading weights restores a predictor, not the run.",
        "hint": "Save the optimizer, scheduler and scaler state_dicts, the counters (update, epoch, batch), "
                "the best-validation pair and the three generators' states along with the model.",
    },
    {
        "slug": "tutorial-checkpoint",
        "name": "model, optimizer and epoch only (the classic general checkpoint)",
        "library": "the PyTorch tutorial",
        "convention": True,
        "delta": {"scheduler": False, "scaler": False, "counter": False, "position": "epoch", "best": False,
                  "rng": ()},
        "explanation": "The checkpoint held the model's and the optimizer's state_dicts and the epoch, the "
                       "general checkpoint of PyTorch's save-and-load recipe, and the run resumed at the start "
                       "of that epoch. That keeps AdamW's moments, but the scheduler restarts its warmup, the "
                       "loss scale and the update counter start over, the batches already read in the epoch "
                       "are read again, the generators are not where they were and the best-validation "
                       "record is lost. The recipe is a starting point for resuming at epoch boundaries, "
                       "not an exact resume.",
        "hint": "Add the scheduler and scaler state_dicts, run.update and run.batch, best_loss/best_state "
                "and torch's, numpy's and Python's generator states.",
    },
    {
        "slug": "no-optimizer-state",
        "name": "optimizer state not restored",
        "delta": {"optimizer": False},
        "explanation": "Everything came back except the optimizer's state_dict, so the resumed AdamW started "
                       "with zero moments and a step count of 0: its bias correction treats the next update as "
                       "the very first, and the first resumed step even used the fresh optimizer's lr (the "
                       "scheduler's state_dict does not write the lr back into the optimizer; the "
                       "optimizer's state_dict carries it). For AdamW the moments are half of what training "
                       "has learnt about the gradients.",
        "hint": "run.optimizer.load_state_dict(state['optimizer']) with state['optimizer'] = a copy of "
                "run.optimizer.state_dict().",
    },
    {
        "slug": "schedule-restarted",
        "name": "the learning-rate schedule restarted",
        "delta": {"scheduler": False},
        "explanation": "The scheduler's state was not restored, so the fresh LambdaLR counted from 0: the first "
                       "resumed step still used the right lr (it came back with the optimizer's state_dict), "
                       "but from the next update on the schedule replayed warmup and the whole decay from "
                       "the beginning. In the worked example step 6 runs at 0.0333 instead of 0.0447.",
        "hint": "Save run.scheduler.state_dict() and load it with run.scheduler.load_state_dict(...); it holds "
                "last_epoch, the schedule's position.",
    },
    {
        "slug": "counter-reset",
        "name": "the update counter reset to 0",
        "delta": {"counter": False},
        "explanation": "run.update was not restored, so after the resume the count of successful updates "
                       "started again from 0 while everything else went on from the save. The counter is "
                       "what decides when the run ends (and, in real loops, when to log, evaluate or "
                       "checkpoint), so the resumed job would train for as many updates again as had "
                       "already been done.",
        "hint": "Save run.update with the rest and set it back in load_state.",
    },
    {
        "slug": "scaler-reset",
        "name": "the loss scaler reset",
        "delta": {"scaler": False},
        "explanation": "The GradScaler's state was not restored, so after the resume the loss scale went back "
                       "to its initial value and its count of clean steps to 0. The scale then grows, and "
                       "overflows, on different steps than in the uninterrupted run, and a skipped step "
                       "changes everything after it: the update counter, the schedule and the weights. "
                       "With fp16 the scale is part of the run's state.",
        "hint": "Save run.scaler.state_dict() (the scale and the growth tracker) and load it with "
                "run.scaler.load_state_dict(...).",
    },
    {
        "slug": "rng-not-restored",
        "name": "random generators not restored",
        "delta": {"rng": ()},
        "explanation": "No generator state was saved, so after the resume torch, numpy and Python drew from "
                       "wherever the restarted script's seeding left them: the dropout masks and the "
                       "augmentation after the resume were the ones from the start of training, not the ones "
                       "the uninterrupted run drew at that point. The weights came back exactly, yet the very "
                       "first resumed step already trained on different noise.",
        "hint": "Save torch.get_rng_state(), np.random.get_state() and random.getstate(), and set them back "
                "with torch.set_rng_state, np.random.set_state and random.setstate.",
    },
    {
        "slug": "torch-rng-only",
        "name": "only torch's generator restored",
        "delta": {"rng": ("torch",)},
        "explanation": "torch's generator came back, so dropout drew the right masks, but numpy's and Python's "
                       "did not, and the augmentation (numpy's Gaussian noise, Python's choice of the feature "
                       "to zero) differed after the resume. Data pipelines often draw from numpy or random "
                       "rather than torch; each generator the loop uses is state to save.",
        "hint": "Also save np.random.get_state() and random.getstate(), and restore them with "
                "np.random.set_state and random.setstate.",
    },
    {
        "slug": "python-rng-missing",
        "name": "Python's generator not restored",
        "delta": {"rng": ("torch", "numpy")},
        "explanation": "torch's and numpy's generators came back, so the dropout masks and numpy's Gaussian "
                       "noise matched, but Python's random module did not: its choice of the feature to zero "
                       "differed after the resume. The random module is a generator of its own, with its own "
                       "state; restoring torch and numpy does not touch it.",
        "hint": "Also save random.getstate() and restore it with random.setstate.",
    },
    {
        "slug": "numpy-rng-missing",
        "name": "numpy's generator not restored",
        "delta": {"rng": ("torch", "python")},
        "explanation": "torch's and Python's generators came back, so the dropout masks and the feature chosen "
                       "to zero matched, but numpy's global generator did not: its Gaussian noise on the inputs "
                       "differed after the resume. np.random keeps its own state, separate from torch's and "
                       "Python's.",
        "hint": "Also save np.random.get_state() and restore it with np.random.set_state.",
    },
    {
        "slug": "epoch-restarted",
        "name": "the epoch restarted from its first batch (as with ignore_data_skip=True)",
        "library": "the Hugging Face Trainer",
        "convention": True,
        "delta": {"position": "epoch"},
        "explanation": "The epoch was restored but not the position inside it, so the resumed run read the "
                       "interrupted epoch again from its first batch: the batches seen before the save were "
                       "trained on twice and the run drifted from there. The Hugging Face Trainer does this "
                       "on purpose with ignore_data_skip=True (faster to restart, documented as not giving "
                       "the results of the interrupted run; its default skips the batches already seen), and "
                       "Lightning warns that a checkpoint which ended before its epoch did can give unreliable "
                       "results when the dataloader keeps no position. At an epoch boundary the two agree, "
                       "which is why only mid-epoch saves catch it.",
        "hint": "Save run.batch (the next batch to read in the epoch) and set it back with run.epoch.",
    },
    {
        "slug": "set-epoch-forgotten",
        "name": "set_epoch not called on resume",
        "library": "the old Hugging Face Trainer",
        "delta": {"set_epoch": False},
        "explanation": "The epoch and the position came back, but the fresh sampler was never told which epoch "
                       "it is in, so the rest of the interrupted epoch was read in epoch 0's order (the loop "
                       "calls set_epoch only when an epoch begins). Saves in epoch 0 or at an epoch boundary "
                       "hide it. The Hugging Face Trainer had exactly this bug until late 2020 (PR #8878): a "
                       "resumed run shuffled as in epoch 0, so only resumes from the first epoch were exact.",
        "hint": "In load_state, after setting run.epoch, call run.sampler.set_epoch(run.epoch).",
    },
    {
        "slug": "best-weights-resumed",
        "name": "resumed from the best-validation weights",
        "delta": {"model": "best"},
        "explanation": "The model was loaded with run.best_state, the weights of the best validation so far, "
                       "instead of the latest weights, while the optimizer moments, schedule and counters were "
                       "the latest ones. The best checkpoint is for deployment; the resume point is always the "
                       "most recent state. Old weights with current optimizer moments are at best a deliberate "
                       "restart, not a resume.",
        "hint": "Load the model from the state_dict taken at the save; keep best_state only as the "
                "best-validation record.",
    },
    {
        "slug": "best-forgotten",
        "name": "best-validation record not restored",
        "delta": {"best": False},
        "explanation": "run.best_loss and run.best_state were not restored, so after the resume the first "
                       "validation became \"the best\" whatever it was, and the run ended up keeping weights "
                       "that an earlier, better epoch beat. The training itself was exact; its record of the "
                       "best model was not. In the worked example epoch 1's 0.3333 replaces epoch 0's 0.3139.",
        "hint": "Save run.best_loss and (a copy of) run.best_state, and set both back in load_state.",
    },
    {
        "slug": "buffers-forgotten",
        "name": "parameters saved without buffers",
        "delta": {"model": "parameters"},
        "explanation": "Only the model's parameters were saved (named_parameters()), not its buffers: "
                       "BatchNorm's running mean, running variance and batch count came back at their initial "
                       "values. Training-mode steps use batch statistics, so the training loss was unchanged, "
                       "but the running statistics and every validation loss after the resume were different. "
                       "model.state_dict() holds parameters and buffers.",
        "hint": "Save run.model.state_dict() rather than the parameters, and load it with strict checking.",
    },
    {
        "slug": "live-references",
        "name": "the checkpoint holds live tensors",
        "delta": {"copy": False},
        "explanation": "save_state returned the state_dicts themselves, and state_dict() hands out the live "
                       "tensors: the model's weights and AdamW's moments and step counts. The run went on "
                       "training after the save, updating those tensors in place, so by the time the state was "
                       "loaded it held the weights and moments of the lost steps next to the counters, "
                       "schedule and data position of the save. Written to disk at once it would have been "
                       "fine; kept in memory it must be copied.",
        "hint": "Return copy.deepcopy(state) from save_state (or clone every tensor).",
    },
])
