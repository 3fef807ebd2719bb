"""grind: a command-line judge for ML-training interview practice.

The package is split so that the pipeline is visible in its file names:
catalog -> workspace -> grade -> worker (isolated child) -> compare -> diagnose -> views -> render.
Only ``judge/worker/runner.py`` (which runs in the child) imports torch; only the ``render``
package and ``cli.py`` import rich; only ``cli.py`` imports typer.
"""

__version__ = "0.1.0"
