"""Oracle: PyTorch's own implementation, run through the same cases as the reference."""

from torch.nn.utils import clip_grad_norm_  # noqa: F401 - re-exported as the entry point
