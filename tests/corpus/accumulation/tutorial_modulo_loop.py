# expect: failed pitfall=textbook-loop
# source: the loop from most tutorials and the accelerate docs' plain-PyTorch example: loss / k, step when (index + 1) % k == 0
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for index, batch in enumerate(microbatches):
        outputs = model(batch[0])
        loss = loss_fn(outputs, batch[1])
        if len(batch) == 3:
            loss = loss[batch[2]]
        loss = loss.mean() / k
        loss.backward()
        if (index + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
