"""`python -m judge` is the same as `grind`."""

from judge.cli import main

main()
