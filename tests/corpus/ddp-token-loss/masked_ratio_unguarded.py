# expect: failed pitfall=local-mean+empty-rank-nan
# source: the masked-mean formula from a single-GPU script, (loss * mask).sum() / mask.sum(), no guard and no collective: DDP averages rank means, and an all-padding rank divides 0 by 0
def ddp_token_loss(token_losses, mask):
    mask = mask.type_as(token_losses)
    return (token_losses * mask).sum() / mask.sum()
