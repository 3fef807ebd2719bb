"""Settings of a learner's child that the parent must know before it loads the sandbox.

``grind run`` over the per-user daemon never starts a child itself: it only needs these to key
the daemon and to know how long to wait for it. They live here, apart from ``sandbox`` and
``isolation`` (which load ctypes, subprocess and the runner's helpers), so that asking the daemon
imports none of that. Both modules take them from here: one definition each.
"""

from __future__ import annotations

STARTUP_LIMIT_S = 90.0  # importing torch on a loaded machine; learner code has not run yet

# Variables a child inherits from grind's environment (everything else is scrubbed): they change
# how torch runs in the child, so the per-user daemon is keyed by them too.
PASSTHROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LD_LIBRARY_PATH", "SYSTEMROOT")
