# hostile: a route into grind's process past the marks scan, found by a red-team review; refused now
from string import Formatter
def g(o, n):
    return Formatter().get_field("0." + n, (o,), {})[0]
def f():
    pass
gl = g(f, "__glo" + "bals__")
fr = None
