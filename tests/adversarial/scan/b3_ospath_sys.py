# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
import os
p = os.path
mods = p.sys.modules
