"""Oracle: PyTorch's own optimizers, run through the same cases as the reference."""

from torch.optim import Adam, AdamW  # noqa: F401 - re-exported as the entry points
