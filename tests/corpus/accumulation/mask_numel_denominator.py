# expect: failed pitfall=counts-padding
# source: masked losses summed right, the count taken as mask.numel() (batch * length)
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = microbatches[start:start + k]
        total = 0
        for mb in group:
            total += mb[2].numel() if len(mb) == 3 else len(mb[0])
        optimizer.zero_grad()
        for mb in group:
            losses = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                losses = losses.masked_fill(~mb[2], 0.0)
            (losses.sum() / total).backward()
        optimizer.step()
