# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
from warnings import sys as w
from torch.serialization import sys as t
import logging
lg = logging
mods = lg.sys.modules
