# expect: failed pitfall=ignores-mask
# source: (x, y, mask) unpacked as x, y = mb[:2]; every position counted as a token
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        group = [mb[:2] for mb in microbatches[start:start + k]]
        total = sum(y.numel() for _, y in group)
        optimizer.zero_grad()
        for x, y in group:
            (loss_fn(model(x), y).sum() / total).backward()
        optimizer.step()
