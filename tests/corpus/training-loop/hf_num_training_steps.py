# expect: failed pitfall=total-in-microbatches
# source: the common num_training_steps = len(train_dataloader) * num_epochs, not divided by the accumulation steps while the scheduler only steps on update boundaries (HF-style names; written for this corpus, the schedule itself is the exercise's)
import copy
import math

import torch
from torch import nn


def fit(model, train, val, make_optimizer, loss_fn, *, epochs, micro_size, accumulation, lr, weight_decay,
        warmup, min_ratio, max_norm):
    no_decay = [p for m in model.modules() for n, p in m.named_parameters(recurse=False)
                if n == "bias" or isinstance(m, nn.LayerNorm)]
    no_ids = {id(p) for p in no_decay}
    optimizer = make_optimizer([
        {"params": [p for p in model.parameters() if id(p) not in no_ids], "weight_decay": weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ], lr)
    x, y = train
    train_dataloader = [(x[i:i + micro_size], y[i:i + micro_size]) for i in range(0, len(x), micro_size)]
    num_training_steps = len(train_dataloader) * epochs

    def lr_lambda(current_step):
        if current_step < warmup:
            return (current_step + 1) / warmup
        progress = (current_step - warmup) / max(1, num_training_steps - warmup - 1)
        return min_ratio + (1 - min_ratio) * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))

    completed_steps = 0
    best_metric, best_weights = math.inf, None
    for _epoch in range(epochs):
        model.train()
        for start in range(0, len(train_dataloader), accumulation):
            chunk = train_dataloader[start:start + accumulation]
            examples = sum(b[0].shape[0] for b in chunk)
            optimizer.zero_grad()
            for inputs, targets in chunk:
                loss = loss_fn(model(inputs), targets).sum() / examples
                loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            for group in optimizer.param_groups:
                group["lr"] = lr * lr_lambda(completed_steps)
            optimizer.step()
            completed_steps += 1
        model.eval()
        with torch.no_grad():
            eval_loss = loss_fn(model(val[0]), val[1]).mean().item()
        if eval_loss < best_metric:
            best_metric = eval_loss
            best_weights = copy.deepcopy(model.state_dict())
    return best_weights
