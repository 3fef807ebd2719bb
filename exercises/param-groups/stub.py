"""AdamW parameter groups. Run `grind run param-groups` to check your answer."""

from torch import nn  # noqa: F401 - the normalization classes live here


def param_groups(model, weight_decay):
    """Split model's trainable parameters into groups for torch.optim.AdamW(groups, lr=...).

    model:        a torch.nn.Module.
    weight_decay: the decay for ordinary weights.

    Returns a list of dicts, each {"params": [tensors...], "weight_decay": value}: weight_decay for
    weights; 0.0 for biases and for every parameter owned by a normalization layer. Frozen
    parameters are left out, and a tensor shared by two modules appears exactly once.
    """
    raise NotImplementedError("write param_groups")
