"""Known-wrong ways to write a checkpoint from a DDP job. Every pitfall is a delta
(grind_kit.Deltas) of one save with three choices: who writes, whether the ranks wait for the
write, and what is written. Deltas that change different choices combine into one save making
both mistakes (local rank 0 writing the wrapper's keys, say)."""

import os

import torch
import torch.distributed as dist

from grind_kit import Deltas


def _content(model, content):
    if content == "wrapper":
        return model.state_dict()  # the DDP wrapper's: every key starts with "module."
    if content == "module-object":
        return model.module  # the module object itself, pickled with its class
    if content == "parameters":
        return {name: p.detach() for name, p in model.module.named_parameters()}  # no buffers
    return model.module.state_dict()  # right


def _make(options):
    writer = options.get("writer", "global")
    barrier = options.get("barrier", "after")
    content = options.get("content", "bare")

    def save_checkpoint(model, path, local_rank):
        if writer == "string-rank":
            writes = os.environ["RANK"] == 0  # a str compared with an int: never true, nobody writes
        else:
            writes = writer == "every" or (writer == "local" and local_rank == 0) or \
                (writer == "global" and dist.get_rank() == 0)
        if writes:
            torch.save(_content(model, content), path)
            if barrier == "writer":
                dist.barrier()  # inside the writer's branch: the other ranks never arrive
        elif barrier == "others":
            dist.barrier()  # the readers wait, the writer never comes
        if barrier == "after":
            dist.barrier()

    return save_checkpoint


mistakes = Deltas.on_options(_make)
COMBINE = "all"  # pairs run only when a diagnosis needs them
# A barrier on one side of the if hangs the job whatever else the save gets wrong: paired with a
# content mistake it behaves exactly like itself, so a pair could only ever be named when the
# deadlock's wording (which depends on the load: which ranks were counted as waiting yet) happened
# to agree with the pair's run and not with the single's, naming a mistake the learner did not make.
ALONE = {"barrier-in-writer-branch", "barrier-in-reader-branch"}


def combine(a, b):
    return None if ALONE & {a, b} else mistakes.combine(a, b)

PITFALLS = mistakes.pitfalls([
    {
        "slug": "local-rank-zero",
        "name": "local rank 0 writes (one writer per node)",
        "delta": {"writer": "local"},
        "explanation": "The writer was chosen with local_rank == 0. The local rank counts processes within "
                       "one machine, so every node has a local rank 0: on two nodes two processes wrote the "
                       "same file at once (on a shared filesystem they race and can leave it torn; on local "
                       "disks each node keeps its own copy). One checkpoint per job is written by global "
                       "rank 0, which exists once.",
        "hint": "Ask the process group, not the node: torch.distributed.get_rank() == 0.",
    },
    {
        "slug": "every-rank-writes",
        "name": "every rank writes the checkpoint",
        "delta": {"writer": "every"},
        "explanation": "torch.save ran on every rank, so the job wrote the same file world_size times, all "
                       "at once. The bytes are the same only because DDP keeps the replicas in sync; the "
                       "writes still race on one path, multiply the I/O, and a reader can catch the file "
                       "while another rank truncates it.",
        "hint": "Only one process writes: guard torch.save with the global rank.",
    },
    {
        "slug": "no-barrier",
        "name": "no barrier after the write",
        "delta": {"barrier": "none"},
        "explanation": "Rank 0 wrote the file, but nothing made the other ranks wait for it: they returned "
                       "at once, and a rank that goes on to load the checkpoint (or exits, ending the job) "
                       "finds it missing or half-written. A barrier before the write does not help either: "
                       "it only makes the ranks meet before rank 0 starts. The ranks must meet after the "
                       "file is complete.",
        "hint": "Call torch.distributed.barrier() on every rank after rank 0's torch.save, outside the if.",
    },
    {
        "slug": "module-prefix",
        "name": "the DDP wrapper's keys (module.) saved",
        "delta": {"content": "wrapper"},
        "explanation": "The state_dict came from the DistributedDataParallel wrapper, whose keys all start "
                       "with 'module.' (module.weight instead of weight). A plain model, as used for "
                       "evaluation or a single-process resume, then refuses the checkpoint with missing "
                       "and unexpected keys.",
        "hint": "Save the wrapped model's own state: model.module.state_dict().",
    },
    {
        "slug": "pickled-module",
        "name": "the module object pickled instead of its state_dict",
        "delta": {"content": "module-object"},
        "explanation": "torch.save was given the nn.Module itself, which pickles its class by import path. "
                       "torch.load with weights_only=True (the default since torch 2.6) refuses such a "
                       "file, and loading it without that means running whatever code the pickle names; "
                       "it also breaks as soon as the class moves or changes.",
        "hint": "Save a state_dict (a dict of tensors): it loads with weights_only=True into any model of "
                "the same architecture.",
    },
    {
        "slug": "parameters-only",
        "name": "parameters saved without the buffers",
        "delta": {"content": "parameters"},
        "explanation": "The checkpoint was built from named_parameters(), which leaves out the buffers: a "
                       "BatchNorm's running mean and variance and its batch counter. A model restored from "
                       "it normalises with fresh statistics and evaluates differently from the one that "
                       "was saved.",
        "hint": "state_dict() holds the parameters and the buffers: save that.",
    },
    # The readers' barrier comes before the writer's: the two differ only in their deadlock's text,
    # and when a loaded machine words a learner's deadlock differently (seen twice for the readers'
    # barrier under a parallel test run, never for the writer's), grind falls back to matching the
    # error's type and takes the first pitfall listed.
    {
        "slug": "barrier-in-reader-branch",
        "name": "the barrier only on the ranks that do not write",
        "delta": {"barrier": "others"},
        "explanation": "The ranks other than the writer waited in a barrier (an else branch: 'wait for rank 0'), "
                       "while rank 0 saved and returned without joining it. A barrier needs every rank: the "
                       "readers wait for a rank that never comes, and the job hangs.",
        "hint": "Every rank, the writer included, calls the same dist.barrier() after the if.",
    },
    {
        "slug": "barrier-in-writer-branch",
        "name": "the barrier inside the writer's if (rank 0 only)",
        "delta": {"barrier": "writer"},
        "explanation": "The barrier was called under `if rank == 0`, right after torch.save. A barrier only "
                       "completes when every rank of the group calls it: rank 0 waits there for ranks that "
                       "have already returned, and the job hangs at its first checkpoint (until the "
                       "collective times out). The barrier belongs outside the if, where every rank reaches it.",
        "hint": "Dedent the barrier: every rank calls dist.barrier() after the if, rank 0 once its save is done.",
    },
    {
        "slug": "rank-env-string",
        "name": "os.environ['RANK'] compared with the integer 0 (nobody writes)",
        "delta": {"writer": "string-rank"},
        "explanation": "The writer was chosen with os.environ['RANK'] == 0. Environment variables are strings, "
                       "and '0' == 0 is False in Python, so no rank ever saved: the job runs to the end without "
                       "a checkpoint, and nothing fails until someone needs one.",
        "hint": "Convert it, int(os.environ['RANK']) == 0, or ask the process group: dist.get_rank() == 0.",
    },
])
