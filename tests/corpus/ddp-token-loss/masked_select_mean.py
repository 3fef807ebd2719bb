# expect: failed pitfall=local-mean
# source: the single-GPU habit token_losses[mask].mean(), left for DDP to average; on an all-padding rank its value is NaN, but its backward reaches no position, so the gradient is the plain local mean's
def ddp_token_loss(token_losses, mask):
    return token_losses[mask.bool()].mean()
