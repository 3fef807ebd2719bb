# expect: passed
# Keeps every microbatch's graph and backpropagates their sum once: the first k - 1 forwards under
# no_sync, the last outside, so the single backward is the one DDP all-reduces.
import torch


def accumulate_gradients(model, microbatches, loss_fn):
    *head, (last_x, last_y) = microbatches
    losses = []
    with model.no_sync():
        for x, y in head:
            losses.append(loss_fn(model(x), y))
    losses.append(loss_fn(model(last_x), last_y))
    total = torch.stack(losses).mean()  # the mean of k microbatch means
    total.backward()
