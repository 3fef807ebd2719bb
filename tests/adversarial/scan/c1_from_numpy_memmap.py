# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
from numpy import memmap
from torch import from_file
