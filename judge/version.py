"""grind's version, in a module of its own: every room reads it, and importing it loads nothing else
(the package's __init__ lends the notebook API, which would put every reader of the version in a
circle with the front ends)."""

__version__ = "0.1.0"
