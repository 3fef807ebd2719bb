# expect: failed pitfall=mean-over-k
# source: look-alike of nanoGPT's loop (loss = loss / gradient_accumulation_steps, mean over the valid tokens like ignore_index) adapted to groups of k with a tail
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    gradient_accumulation_steps = k
    for start in range(0, len(microbatches), gradient_accumulation_steps):
        for batch in microbatches[start:start + gradient_accumulation_steps]:
            logits = model(batch[0])
            loss = loss_fn(logits, batch[1])
            loss = loss[batch[2]].mean() if len(batch) == 3 else loss.mean()
            loss = loss / gradient_accumulation_steps
            loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
