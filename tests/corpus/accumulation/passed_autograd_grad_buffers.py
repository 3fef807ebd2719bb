# expect: passed
# source: torch.autograd.grad per microbatch into explicit buffers, the group gradient written into .grad by hand
import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    params = list(model.parameters())
    i = 0
    while i < len(microbatches):
        group = microbatches[i:i + k]
        i += k
        acc = [torch.zeros_like(p) for p in params]
        n_total = 0
        for mb in group:
            x, y = mb[0], mb[1]
            losses = loss_fn(model(x), y)
            if len(mb) == 3:
                losses = losses[mb[2]]
            n_total += losses.numel()
            if losses.numel() == 0:
                continue
            grads = torch.autograd.grad(losses.sum(), params)
            for a, g in zip(acc, grads):
                a.add_(g)
        optimizer.zero_grad()
        for p, a in zip(params, acc):
            p.grad = a / n_total
        optimizer.step()
