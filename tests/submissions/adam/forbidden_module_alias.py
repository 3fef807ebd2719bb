# expect: forbidden
# The built-ins handed over as module-level aliases: no learner frame is on the stack when the
# judge calls them, so the runner checks the entry points by identity after loading.
import torch

Adam = getattr(torch.optim, "Ad" + "am")
AdamW = getattr(torch.optim, "Ad" + "amW")
