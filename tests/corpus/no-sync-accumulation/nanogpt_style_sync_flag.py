# expect: passed
# source: in the style of nanoGPT's training loop: instead of the no_sync context, DDP's require_backward_grad_sync flag is set before each forward, True only on the last micro step
def accumulate_gradients(model, microbatches, loss_fn):
    gradient_accumulation_steps = len(microbatches)
    for micro_step, (X, Y) in enumerate(microbatches):
        model.require_backward_grad_sync = (micro_step == gradient_accumulation_steps - 1)
        logits = model(X)
        loss = loss_fn(logits, Y)
        loss = loss / gradient_accumulation_steps
        loss.backward()
    model.require_backward_grad_sync = True
