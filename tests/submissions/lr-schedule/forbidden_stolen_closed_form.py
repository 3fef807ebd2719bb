# expect: forbidden
# Trick: torch's CosineAnnealingLR._get_closed_form_lr borrowed as a plain function and called
# on a learner object that carries the attributes it reads (base_lrs, eta_min, T_max, ...).
import torch

_closed_form = vars(getattr(torch.optim.lr_scheduler, "CosineAnnealing" + "LR").__mro__[1])["_get_closed_form_lr"]


class _Curve:
    def __init__(self, span, floor, done):
        self.base_lrs, self.eta_min, self.T_max, self.last_epoch = [1.0], floor, span, done


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    if step < warmup_steps:
        return step / warmup_steps
    done = min(step, total_steps) - warmup_steps
    return _closed_form(_Curve(total_steps - warmup_steps, min_ratio, done))[0]
