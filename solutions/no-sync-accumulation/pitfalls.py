"""Known-wrong ways to accumulate microbatches under DDP. Each is a whole implementation a
learner could write; they share one loop and differ in the options each gets wrong.

Every pitfall is a *delta* (grind_kit.Deltas) of ``_implementation``'s keyword options: ``sync`` says
which microbatches run outside ``no_sync`` and how (the right one: only the last; ``"manual"``:
none, then a hand-written all_reduce), ``divide`` what each microbatch loss is divided by,
``zero_each`` whether the gradients are cleared before every microbatch. Deltas that set
different options compose: ``combine("forward-outside", "no-one-over-k")``. The observations
that tell them apart, per rank: the number of gradient all-reduces (1 is right), how many of
those ran under no_sync (0), and the gradients."""

import contextlib

import torch.distributed as dist

from grind_kit import Deltas


def _synced(model, i, k, sync):
    """The context microbatch i's backward runs in."""
    if sync == "always":
        return contextlib.nullcontext()
    if sync in ("never", "manual"):
        return model.no_sync()
    if sync == "first":
        return contextlib.nullcontext() if i == 0 else model.no_sync()
    return contextlib.nullcontext() if i == k - 1 else model.no_sync()  # "last" and "forward-outside"


def _implementation(options):
    sync = options.get("sync", "last")
    divide = options.get("divide", "k")
    zero_each = options.get("zero_each", False)

    def accumulate_gradients(model, microbatches, loss_fn):
        k = len(microbatches)
        factor = {"k": k, "one": 1, "k*R": k * dist.get_world_size()}[divide]
        for i, (inputs, targets) in enumerate(microbatches):
            if zero_each:
                model.zero_grad()
            if sync == "forward-outside":
                loss = loss_fn(model(inputs), targets) / factor  # DDP is prepared to sync here already
                with _synced(model, i, k, sync):
                    loss.backward()
                continue
            with _synced(model, i, k, sync):
                (loss_fn(model(inputs), targets) / factor).backward()
        if sync == "manual":  # DDP never synchronised: average each gradient by hand instead
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= dist.get_world_size()

    return accumulate_gradients


MISTAKES = Deltas.on_options(_implementation)
COMBINE = "all"
combine = MISTAKES.combine

PITFALLS = MISTAKES.pitfalls([
    {
        "slug": "no-no-sync",
        "name": "no no_sync: every microbatch all-reduced",
        "delta": {"sync": "always"},
        "explanation": "Every backward ran with DDP's synchronisation on, so the gradients were "
                       "all-reduced after each of the k microbatches instead of once. The result is the "
                       "same (the all-reduce of a sum is the sum of the all-reduces), but the update cost "
                       "k rounds of communication over the whole model where one was enough, which is "
                       "the reason accumulation under DDP exists.",
        "hint": "Wrap every microbatch but the last in `with model.no_sync():`.",
    },
    {
        "slug": "forward-outside",
        "name": "the forward outside no_sync",
        "delta": {"sync": "forward-outside"},
        "explanation": "Only the backward was inside no_sync; the forward ran before the context was "
                       "entered. DDP decides during the forward whether the next backward all-reduces, "
                       "so every microbatch was still synchronised (k all-reduces, k - 1 of them while "
                       "no_sync was active): the context did nothing.",
        "hint": "Enter no_sync before calling the model: the forward and the backward both belong inside it.",
    },
    {
        "slug": "no-sync-everywhere",
        "name": "no_sync on every microbatch, the last one too",
        "delta": {"sync": "never"},
        "explanation": "Every microbatch, the last one included, ran under no_sync, so DDP never "
                       "all-reduced anything. Each rank kept the gradient of its own data only: the ranks "
                       "hold different gradients and, after the optimizer step, different models.",
        "hint": "The last microbatch's forward and backward run outside no_sync: that backward is the one "
                "all-reduce.",
    },
    {
        "slug": "manual-all-reduce",
        "name": "gradients all-reduced by hand instead of by DDP",
        "delta": {"sync": "manual"},
        "explanation": "Every microbatch ran under no_sync and the gradients were then averaged with one "
                       "dist.all_reduce per parameter. The numbers are right, but DDP never synchronised "
                       "(0 gradient all-reduces): its bucketed all-reduce, overlapped with the backward "
                       "pass, was replaced by one blocking collective per tensor, which is what DDP exists "
                       "to avoid. The statement asks for DDP's own all-reduce.",
        "hint": "Let DDP do it: run the last microbatch outside no_sync and its backward all-reduces the "
                "accumulated gradients.",
    },
    {
        "slug": "sync-on-first",
        "name": "the first microbatch synchronised instead of the last",
        "delta": {"sync": "first"},
        "explanation": "The one synchronised backward was the first microbatch's, so only its gradient "
                       "was averaged over the ranks; the later microbatches added their local gradients "
                       "after the all-reduce, and the ranks ended with different gradients. One "
                       "all-reduce is right, but it has to come after everything is accumulated.",
        "hint": "Synchronise the last microbatch, when .grad already holds the other k - 1.",
    },
    {
        "slug": "no-one-over-k",
        "name": "microbatch losses not divided by k",
        "delta": {"divide": "one"},
        "explanation": "Each microbatch's mean loss was backpropagated as it was, so .grad holds the sum "
                       "of k microbatch means: k times the gradient of the mean over the update's data. "
                       "With SGD that is a learning rate k times too large.",
        "hint": "Backpropagate loss / k, with k the number of microbatches.",
    },
    {
        "slug": "divided-by-world-size",
        "name": "divided by the world size as well",
        "delta": {"divide": "k*R"},
        "explanation": "Each microbatch loss was divided by k and by the number of ranks R. DDP already "
                       "averages the gradients over the ranks (it divides their sum by R), so the "
                       "gradients came out R times too small.",
        "hint": "Divide by k only: DDP's all-reduce averages over the ranks by itself.",
    },
    {
        "slug": "zero-grad-each-microbatch",
        "name": "gradients zeroed before every microbatch",
        "delta": {"zero_each": True},
        "explanation": "The gradients were cleared at the start of every microbatch, as in a loop without "
                       "accumulation, so each backward threw away what the earlier ones had added: only "
                       "the last microbatch (divided by k) reached the all-reduce.",
        "hint": "Zero the gradients once per update, before the first microbatch (the caller does it "
                "here), never between microbatches.",
    },
])
