"""The old home of every screen, kept as a thin facade so existing imports keep working.

The screens now live in two packages: ``judge.views`` computes one plain-data model per screen,
and ``judge.render`` draws it, as plain lines or with rich (see their docstrings). New code
imports from those; this module only re-exports, and imports no rich of its own.
"""

from __future__ import annotations

from judge.render import (  # noqa: F401 - re-exported
    WatchView,
    grading_progress,
    render_class,
    render_doctor,
    render_list,
    render_practice_summary,
    render_progress,
    render_statement,
    render_text,
    render_validation,
    render_verdict,
    show,
)
from judge.text import clock_text, safe, safe_data, terminal_safe, until_text  # noqa: F401 - re-exported
from judge.views.screens import KEYS_HELP, ago_text, minutes_text  # noqa: F401 - re-exported
from judge.views.verdict import HintInfo, compact, number, printable  # noqa: F401 - re-exported

