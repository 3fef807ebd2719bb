"""Front ends that meet learners where they already work: a Jupyter notebook and an MCP tutor.

Both are adapters over the same judge as ``grind run``, exactly as ``judge/cli/`` is:

- ``judge.frontends.actions`` holds what a front end asks of grind (grade a source, the next
  hint, the solution, the statement, the list, the progress), with the CLI's rules and the
  CLI's ``--json`` shapes, and imports no UI library at all;
- ``judge.frontends.notebook`` draws verdicts as HTML in IPython (``%load_ext judge``);
- ``judge.frontends.mcp_server`` serves the same actions as MCP tools on stdio (``grind mcp``);
- ``judge.frontends.starter`` writes the starter notebooks of ``grind init --notebook``.

IPython and the ``mcp`` SDK are optional extras (``notebook``, ``mcp``): only the module that
needs one imports it, so the core and the CLI run without either.
"""
