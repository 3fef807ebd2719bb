# expect: failed pitfall=nanogpt-warmup
# source: look-alike of nanoGPT's train.py get_lr (current): warmup learning_rate * (it + 1) / (warmup_iters + 1), min_lr past lr_decay_iters, cosine in between; adapted to a ratio of max_lr
import math

learning_rate = 1.0  # the multiplier is the lr of a run whose peak is 1


def lr_multiplier(step, warmup_steps, total_steps, min_ratio=0.0):
    it, warmup_iters, lr_decay_iters = step, warmup_steps, total_steps
    min_lr = min_ratio * learning_rate
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)
