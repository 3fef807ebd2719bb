# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
import numpy as np
a = np.lib.format.open_memmap("ckpt.npy", mode="w+", dtype=np.uint8, shape=(1000,))
a[:] = 7
a.flush()
b = np.load("ckpt.npy", mmap_mode="r+")
b[:] = 9
