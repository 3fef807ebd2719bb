# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
import sys
y = sys
checks = y.modules["grind_" + "checks"]
checks.anything = 1
