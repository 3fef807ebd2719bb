# expect: failed pitfall=raw-sum
# source: reduction="sum" so that unequal microbatches add up right, then the division forgotten
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    groups = [microbatches[i:i + k] for i in range(0, len(microbatches), k)]
    for group in groups:
        optimizer.zero_grad()
        for mb in group:
            out = loss_fn(model(mb[0]), mb[1])
            if len(mb) == 3:
                out = out * mb[2]
            out.sum().backward()
        optimizer.step()
