# expect: failed pitfall=average-of-means
# source: the group's loss as torch.stack of the microbatch means, averaged: one backward per group
import torch


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for s in range(0, len(microbatches), k):
        means = []
        for mb in microbatches[s:s + k]:
            l = loss_fn(model(mb[0]), mb[1])
            means.append(l[mb[2]].mean() if len(mb) == 3 else l.mean())
        optimizer.zero_grad()
        torch.stack(means).mean().backward()
        optimizer.step()
