# expect: failed pitfall=sync-on-first
# source: nanoGPT-style flag with the condition written as micro_step == 0, so the one synchronised backward is the first
def accumulate_gradients(model, microbatches, loss_fn):
    accum = len(microbatches)
    for micro_step, (xb, yb) in enumerate(microbatches):
        model.require_backward_grad_sync = micro_step == 0
        loss = loss_fn(model(xb), yb) / accum
        loss.backward()
    model.require_backward_grad_sync = True
