"""Known-wrong ways to scale a rank's token loss under DDP. Each is a whole implementation a
learner could write; the gradients after DDP's average tell them apart (G is the true gradient of
the global token mean, S_r and N_r a rank's loss sum and valid-token count, N = sum of N_r)."""

import torch
import torch.distributed as dist


def _sum_and_count(token_losses, mask):
    mask = mask.to(token_losses.dtype)
    return (token_losses * mask).sum(), mask.sum()


def _global_count(count):
    total = count.detach().clone()
    dist.all_reduce(total)
    return total


def local_mean(token_losses, mask):
    loss_sum, count = _sum_and_count(token_losses, mask)
    return loss_sum / count.clamp(min=1)  # DDP then averages R rank means (an empty rank adds 0)


def local_count_times_world(token_losses, mask):
    loss_sum, count = _sum_and_count(token_losses, mask)
    return loss_sum * dist.get_world_size() / count.clamp(min=1)


def missing_world(token_losses, mask):
    loss_sum, count = _sum_and_count(token_losses, mask)
    return loss_sum / _global_count(count).clamp(min=1)  # DDP's 1/R is left in: G / R


def reduced_loss(token_losses, mask):
    loss_sum, count = _sum_and_count(token_losses, mask)
    loss = loss_sum / count
    dist.all_reduce(loss)  # the value is averaged for the log, the gradient is still the local mean's
    loss /= dist.get_world_size()
    return loss


def padded_count(token_losses, mask):
    loss_sum, _ = _sum_and_count(token_losses, mask)
    slots = torch.tensor(float(mask.numel()), dtype=token_losses.dtype)
    return loss_sum * dist.get_world_size() / _global_count(slots)


def two_ranks(token_losses, mask):
    loss_sum, count = _sum_and_count(token_losses, mask)
    return loss_sum * 2 / _global_count(count).clamp(min=1)


PITFALLS = [
    {
        "slug": "local-mean",
        "name": "each rank's own token mean",
        "impl": local_mean,
        "explanation": "Each rank returned the mean over its own valid tokens, and DDP averaged those "
                       "means. An average of rank means weights a token on a rank with few tokens more "
                       "than one on a rank with many, so the update is not the global token mean unless "
                       "every rank happens to hold the same number of valid tokens.",
        "hint": "The denominator must be the number of valid tokens on all ranks together: all_reduce the "
                "count.",
    },
    {
        "slug": "local-count",
        "name": "divided by the local count",
        "impl": local_count_times_world,
        "explanation": "The factor R is there, but the loss sum was divided by this rank's own token count "
                       "N_r. The result is R times the average of the rank means: right only when the "
                       "counts are equal, and wrong in both scale and weighting otherwise.",
        "hint": "N in R / N is the total count over every rank, not this rank's count.",
    },
    {
        "slug": "missing-world-size",
        "name": "the factor R left out",
        "impl": missing_world,
        "explanation": "The loss sum was divided by the global count N but not multiplied by R. DDP "
                       "averages gradients, that is it sums them and divides by R, so every gradient came "
                       "out R times too small.",
        "hint": "DDP divides the summed gradients by the world size: multiply by it to cancel that.",
    },
    {
        "slug": "reduced-loss",
        "name": "the loss all-reduced instead of the count",
        "impl": reduced_loss,
        "explanation": "The local mean loss was all-reduced and divided by R. That makes the printed loss "
                       "look global, but all_reduce is not part of autograd: the gradient is still each "
                       "rank's local mean, divided by R once here and once more by DDP.",
        "hint": "What has to be shared across ranks is the token count (a number without gradient); the "
                "loss sum stays local and DDP combines its gradient.",
    },
    {
        "slug": "padded-count",
        "name": "padding counted as tokens",
        "impl": padded_count,
        "explanation": "The denominator counted every position of the padded batch, not the valid tokens. "
                       "Padding contributes no loss, so the gradient is shrunk by the share of padding, "
                       "which changes from batch to batch.",
        "hint": "Count the valid tokens: the sum of the mask.",
    },
    {
        "slug": "hard-coded-world-size",
        "name": "the world size written as 2",
        "impl": two_ranks,
        "explanation": "The factor R was written as the number 2. That is right on two ranks only; with "
                       "four ranks every gradient comes out half as large as it should.",
        "hint": "Ask the process group: torch.distributed.get_world_size().",
    },
]
