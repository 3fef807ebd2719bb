# expect: failed
# source: hostile learner (review of issue 14): saves nothing and, at load time, searches the judge's case code in its own process (modules, then the calling frames) for the uninterrupted run's observations to hand back; the case code must hold no such answer
import sys

import torch


def _answers():
    """Anything in the process that looks like recorded observations of a whole run."""
    found = []
    for module in list(sys.modules.values()):
        for value in list(vars(module).values()) if hasattr(module, "__dict__") else []:
            if isinstance(value, dict):
                for item in value.values():
                    if isinstance(item, tuple) and item and isinstance(item[0], dict):
                        found.append(item[0])
    frame = sys._getframe(1)
    while frame is not None:
        for name in ("expected", "want", "answer"):
            if isinstance(frame.f_locals.get(name), dict):
                found.append(frame.f_locals[name])
        frame = frame.f_back
    return found


def save_state(run):
    return None


def load_state(run, state):
    for answer in _answers():
        rows = answer.get("update counter per step")
        if rows is not None:
            run.update = len(rows)
            frame = sys._getframe(1)
            rec = frame.f_locals.get("rec")
            if rec is not None:
                for key, value in answer.items():
                    if key in rec.rows:
                        rec.rows[key] = list(value) if not isinstance(value, torch.Tensor) else list(value.unbind(0))
            return
