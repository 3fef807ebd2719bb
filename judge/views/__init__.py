"""What each screen shows, as plain data: one view model per screen, built from the core's data.

The output of grind has two renderings, a rich one for a terminal and plain lines for pipes,
logs and ``NO_COLOR``-style consumers. They used to be built side by side in one module, each
from the raw verdict or progress, and so could drift apart (a fact shown on a terminal and not
in a log). Now every screen is computed once, here, into a dataclass that holds every string a
reader will see (already made safe for the console's encoding, already worded), and
``judge.render`` draws that same model twice: ``judge.render.plain`` as lines of text,
``judge.render.styled`` with rich. Layout and colour are the renderers' business; content is
decided here and nowhere else.

This package imports neither rich nor typer (tests/test_architecture.py checks): a view model
can be built, inspected and tested without a terminal library, and the core never reaches a UI
dependency through it.
"""

from __future__ import annotations

from judge.views.screens import (
    ClassRow,
    ClassView,
    DoctorLevel,
    KEYS_HELP,
    DoctorView,
    Line,
    ListRow,
    ListView,
    PracticeRow,
    PracticeSummaryView,
    ProgressRow,
    ProgressView,
    StatementView,
    TextView,
    Tone,
    ValidationRow,
    ValidationView,
    ago_text,
    class_view,
    doctor_view,
    grading_line,
    hint_view,
    list_view,
    minutes_text,
    practice_summary_view,
    progress_view,
    statement_view,
    validation_view,
    watch_after_verdict,
    watch_intro,
    watch_pick_note,
)
from judge.views.verdict import (
    CheckRow,
    DiagnosisBlock,
    HintInfo,
    SeriesView,
    VerdictView,
    compact,
    diagnosis_lines,
    number,
    printable,
    verdict_view,
)

__all__ = [
    "CheckRow", "ClassRow", "ClassView", "DiagnosisBlock", "DoctorLevel", "DoctorView", "HintInfo", "KEYS_HELP", "Line",
    "ListRow", "ListView", "PracticeRow", "PracticeSummaryView", "ProgressRow", "ProgressView", "SeriesView",
    "StatementView", "TextView", "Tone", "ValidationRow", "ValidationView", "VerdictView", "ago_text", "class_view",
    "compact", "diagnosis_lines", "doctor_view", "grading_line", "hint_view", "list_view", "minutes_text", "number",
    "practice_summary_view", "printable", "progress_view", "statement_view", "validation_view", "verdict_view",
    "watch_after_verdict", "watch_intro", "watch_pick_note",
]
