"""`python -m judge` is the same as `grind`: the fast `grind run`, else the full CLI (judge/entry.py)."""

from judge.entry import script

script()
