# expect: failed pitfall=no-no-sync
# source: the single-GPU accumulation loop moved to DDP unchanged (loss / k, backward every microbatch): right gradients, k all-reduces
def accumulate_gradients(model, microbatches, loss_fn):
    steps = len(microbatches)
    for inputs, targets in microbatches:
        out = model(inputs)
        loss = loss_fn(out, targets) / steps
        loss.backward()
