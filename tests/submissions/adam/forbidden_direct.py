# expect: forbidden
import torch


class Adam(torch.optim.Adam):
    pass


class AdamW(torch.optim.AdamW):
    pass
