# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
import io
import numpy as np
import torch
from numpy import memmap as mm


def save_uncounted(state, path):
    buf = io.BytesIO()
    torch.save(state, buf)
    data = np.frombuffer(buf.getvalue(), dtype=np.uint8)
    with open(path, "wb") as handle:
        handle.truncate(data.size)          # ftruncate(2): no bytes through write(2)
    out = mm(path, dtype=np.uint8, mode="r+", shape=(data.size,))
    out[:] = data
    out.flush()
