"""Oracle: no accumulation at all. Each group's microbatches are concatenated and torch's own
mean over the concatenation is differentiated in one backward pass.

For masked microbatches only the valid positions are concatenated (x[mask] keeps the feature
dimension); the Linear models in the cases act on the last dimension, so this is the same
forward pass as on the padded tensors.
"""

import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    microbatches = list(microbatches)
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        if len(group[0]) == 3:
            xs = torch.cat([x[mask] for x, _, mask in group])
            ys = torch.cat([y[mask] for _, y, mask in group])
        else:
            xs = torch.cat([x for x, _ in group])
            ys = torch.cat([y for _, y in group])
        optimizer.zero_grad()
        loss_fn(model(xs), ys).mean().backward()
        optimizer.step()
