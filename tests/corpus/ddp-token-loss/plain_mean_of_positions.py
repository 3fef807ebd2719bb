# expect: failed pitfall=unmasked-mean
# source: the default reduction of a loss function (a plain mean over the [batch, length] tensor), the mask never used
def ddp_token_loss(token_losses, mask):
    return token_losses.mean()
