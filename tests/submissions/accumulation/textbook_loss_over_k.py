# expect: failed pitfall=mean-over-k
import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    optimizer.zero_grad()
    for i, mb in enumerate(microbatches):
        losses = loss_fn(model(mb[0]), mb[1])
        loss = losses[mb[2]].mean() if len(mb) == 3 else losses.mean()
        (loss / k).backward()
        if (i + 1) % k == 0 or i + 1 == len(microbatches):
            optimizer.step()
            optimizer.zero_grad()
