# expect: failed pitfall=empty-microbatch-nan+mean-over-k
# source: nanoGPT-style loss / gradient_accumulation_steps with the token mean written (l * mask).sum() / mask.sum(): the tail is divided by k and an all-padding microbatch gives NaN
def train_epoch(model, microbatches, optimizer, k, loss_fn):
    for start in range(0, len(microbatches), k):
        optimizer.zero_grad(set_to_none=True)
        for batch in microbatches[start:start + k]:
            l = loss_fn(model(batch[0]), batch[1])
            if len(batch) == 3:
                mask = batch[2].float()
                loss = (l * mask).sum() / mask.sum()
            else:
                loss = l.mean()
            (loss / k).backward()
        optimizer.step()
