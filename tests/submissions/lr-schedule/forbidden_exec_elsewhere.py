# expect: forbidden
# Trick: the function is compiled from a string under another file name with globals of its own,
# and lets torch's CosineAnnealingLR walk the curve after a hand-written warmup.
import torch

_globals = {"torch": torch, "sched": getattr(torch.optim.lr_scheduler, "CosineAnnealing" + "LR")}
exec(compile(
    "def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):\n"
    "    if step < warmup_steps:\n"
    "        return step / warmup_steps\n"
    "    p = torch.nn.Parameter(torch.zeros(1))\n"
    "    opt = torch.optim.SGD([p], lr=1.0)\n"
    "    s = sched(opt, T_max=total_steps - warmup_steps, eta_min=min_ratio)\n"
    "    for _ in range(min(step, total_steps) - warmup_steps):\n"
    "        opt.step()\n"
    "        s.step()\n"
    "    return opt.param_groups[0]['lr']\n",
    "<schedules>", "exec"), _globals)
lr_multiplier = _globals["lr_multiplier"]
