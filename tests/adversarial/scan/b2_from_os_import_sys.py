# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
from os import sys as s
checks = s.modules.get("grind_" + "checks")
m = s.modules["tor" + "ch"]
m.load = lambda *a, **k: "forged"
