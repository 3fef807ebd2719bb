# expect: failed pitfall=mean-over-k
# source: look-alike of HF accelerate's accumulate(): backward divides by gradient_accumulation_steps, and the end of the dataloader forces a sync step (the short tail is still divided by k)
class GradientState:
    def __init__(self, num_steps, length):
        self.num_steps, self.length, self.step = num_steps, length, 0

    def sync_gradients(self):
        return self.step % self.num_steps == 0 or self.step == self.length


def train_epoch(model, microbatches, optimizer, k, loss_fn):
    state = GradientState(k, len(microbatches))
    for batch in microbatches:
        state.step += 1
        per_item = loss_fn(model(batch[0]), batch[1])
        loss = per_item[batch[2]].mean() if len(batch) == 3 else per_item.mean()
        (loss / state.num_steps).backward()  # accelerator.backward
        if state.sync_gradients():
            optimizer.step()
            optimizer.zero_grad()
