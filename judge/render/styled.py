"""Rich renderings for a terminal: panels, tables and colour over the same view models that
``judge.render.plain`` prints as lines.

``renderable(view, console)`` returns something ``console.print`` draws. The console is passed
for what depends on the terminal: its width, and whether it has colour (a plot needs it).
Learner-made strings (check names, exception messages, student names) are always ``Text``,
never parsed as rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from judge.models import CheckStatus, Status

if TYPE_CHECKING:
    from judge.views.screens import (
        ClassView,
        DoctorView,
        ListView,
        PracticeSummaryView,
        ProgressView,
        StatementView,
        TextView,
        Tone,
        ValidationView,
    )
    from judge.views.verdict import EntriesView, SeriesView, VerdictView

STATUS_STYLE = {
    Status.PASSED: "bold green",
    Status.FAILED: "bold red",
    Status.FORBIDDEN: "bold magenta",
    Status.ERROR: "bold yellow",
    Status.TIMEOUT: "bold yellow",
    Status.CRASHED: "bold yellow",
}
MARK = {CheckStatus.PASSED: ("✔", "green"), CheckStatus.FAILED: ("✘", "red"),
        CheckStatus.ERROR: ("✘", "red"), CheckStatus.NOT_RUN: ("·", "dim")}
TONE_STYLE = {"plain": "", "dim": "dim", "note": "yellow", "strong": "bold", "good": "bold green", "info": "cyan",
              "warn": "bold yellow"}  # by Tone's value
STATUS_COLOUR = {"passed": "green", "attempted": "yellow", "new": "dim"}


_DRAW: dict[str, Callable[[Any, Console], Any]] = {}


def _draws(model: str) -> Callable[[Callable[[Any, Console], Any]], Callable[[Any, Console], Any]]:
    """Register the rich rendering of the model class named ``model`` (by name, as in
    judge.render.plain: no screen's models are loaded before it is shown)."""
    def register(draw: Callable[[Any, Console], Any]) -> Callable[[Any, Console], Any]:
        _DRAW[model] = draw
        return draw
    return register


def renderable(view: Any, console: Console) -> Any:
    """``view`` as something ``console.print`` draws."""
    draw = _DRAW.get(type(view).__name__)
    if draw is None:
        raise TypeError(f"no rich rendering for {type(view).__name__}")
    return draw(view, console)


@_draws("VerdictView")
def _verdict(view: VerdictView, console: Console) -> Any:
    """The verdict as a panel: one line per check, then the first failure in detail, the
    diagnosed pitfall with its explanation, and the next hint on offer."""
    parts: list[Any] = [Text(notice, style="yellow") for notice in view.lead]  # None: left out for room
    if view.message:
        parts.append(Text(view.message, style="bold" if view.checks else ""))
    if view.checks:
        parts.append(_check_table(view, console))
    parts += _failure_parts(view)
    plot_at = None
    if view.series is not None:
        plot_at = len(parts) if _plots(console) else None  # the table drawn without colour is 5 rows: kept
        parts.append(series(console, view.series))
    heads: list[int] = []
    for block in view.diagnoses:
        heads.append(len(parts))
        parts.append(_diagnosis_head(block.label, block.name, spaced=True))
        parts += [Text(line) for line in block.body]
    parts += [Text(line, style="dim") for line in view.output]
    parts += [Text(notice, style="yellow") for notice in view.notices]
    if view.footer:
        parts.append(Text(view.footer, style="cyan"))
    subtitle = Text(f" {view.status_word} ", style=STATUS_STYLE[view.status])

    def panel() -> Panel:
        return _titled(Group(*(part for part in parts if part is not None)), Text(view.title, style="bold"), console,
                       subtitle=subtitle, subtitle_align="right", expand=True)

    return _fitted(view, console, parts, panel, plot_at, heads)


def _check_table(view: VerdictView, console: Console) -> Table:
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    # Names fold rather than being cut: a long check name must stay readable at any width.
    table.add_column(overflow="fold", max_width=max(20, console.width // 3))
    table.add_column(style="dim", no_wrap=True)
    table.add_column(overflow="fold", ratio=1)
    for row in view.checks:
        mark, style = MARK[row.status]
        table.add_row(Text(mark, style=style), Text(row.name), Text(row.kind), Text(row.message))
    return table


def _failure_parts(view: VerdictView) -> list[Any]:
    parts: list[Any] = []
    if view.failure is not None and view.details:
        parts.append(Text.assemble(("First failure: ", "bold"), (view.failure, "bold"),
                                   (f" {view.failure_note}" if view.failure_note else "", "dim")))
        # One small grid per line, so each value wraps under itself and no label's width is
        # forced on the others (a shared label column left the values 57 of 80 columns).
        for label, value in view.details:
            parts.append(_hanging([(f"  {label}: " if label else "  ", value)], lead_style="bold"))
    if view.entries is not None:
        parts.append(entries(view.entries))
    return parts


def _fitted(view: VerdictView, console: Console, parts: list[Any], panel: Callable[[], Panel],
            plot_at: int | None, heads: list[int]) -> Panel:
    """The panel, made to fit the screen's rows by leaving out, in turn, the plot, the blank rows
    above the diagnoses, and then lines of their explanations (``parts`` is changed in place)."""
    room = console.height - 1 - view.reserved_rows  # the prompt's (or watch's status) row, and the caller's
    drawn = panel()
    if plot_at is not None and view.series is not None and _rows(drawn, console) > room:
        # The verdict's head (title, counts, first failure) matters more than the curve: a plot
        # that would push it off a short screen is left out, and one line says where to see it.
        parts[plot_at] = Text("  Plot left out (too few rows); a taller terminal or --json shows it.",
                              style="dim", overflow="fold")
        drawn = panel()
    if heads and _rows(drawn, console) > room:
        # Then the blank rows above the diagnoses: a wrong clipping with a note was one row too tall at 80x24.
        for at, block in zip(heads, view.diagnoses):
            parts[at] = _diagnosis_head(block.label, block.name, spaced=False)
        drawn = panel()
    if heads and _rows(drawn, console) > room:
        drawn = _shortened(view, console, parts, panel, heads, room)
    return drawn


def _shortened(view: VerdictView, console: Console, parts: list[Any], panel: Callable[[], Panel],
               heads: list[int], room: int) -> Panel:
    """Last, the explanations: each paragraph to its first sentence, then whole paragraphs, the
    longest explanation's first, down to one each (ddp-token-loss's explanation of the libraries
    that make its mistake pushed the title off 80x24). The name and the gist stay on screen;
    ``--json`` holds every word."""
    bodies = [list(range(at + 1, at + 1 + len(block.body))) for at, block in zip(heads, view.diagnoses)]
    for body, block in zip(bodies, view.diagnoses):  # first, each paragraph to its first sentence
        for at, line in zip(body, block.body):
            first, dot, rest = line.partition(". ")
            if rest:
                parts[at] = Text(first + dot.strip() + " …")
    note_at = None
    drawn = panel()
    while _rows(drawn, console) > room:
        longest = max(bodies, key=len, default=[])
        if len(longest) <= 1:
            break
        gone = longest.pop()
        if note_at is not None:
            parts[note_at] = None
        note_at = gone  # the note takes the place of the line last left out
        parts[note_at] = Text("  (more: a taller terminal, or --json)", style="dim")
        drawn = panel()
    return drawn


def _diagnosis_head(label: str, name: str, spaced: bool) -> Text:
    return Text.assemble((("\n" if spaced else "") + label + ": ", "bold"), (name, "bold red"))


def _rows(renderable: Any, console: Console) -> int:
    """How many rows ``renderable`` takes at the console's width, whatever its height (the caller
    keeps a row for the prompt that follows the verdict)."""
    return len(console.render_lines(renderable, console.options.update(height=None), pad=False))


def entries(view: EntriesView) -> Any:
    """A large observation's summary: its shape, then the first differing entry and its neighbours."""
    table = Table(box=None, padding=(0, 2))
    for column in ("index", "expected", "yours"):
        table.add_column(column, justify="right")
    table.add_column("", width=1, no_wrap=True)
    for index, expected, got, first in view.rows:
        table.add_row(index, expected, got, "◀" if first else "")
    return Group(Text(f"  {view.heading}:", style="bold"), table)


def series(console: Console, view: SeriesView) -> Any:
    """A curve is faster to read than a table: plot yours against the reference's. Without
    colour (NO_COLOR, or a console without colour) the two lines could not be told apart, so
    show the steps around the first divergence as a table instead."""
    if _plots(console):
        import plotext as plt  # type: ignore[import-untyped]  # plotext ships no type information

        base = view.first_step
        plt.clear_figure()
        plt.plot_size(max(40, min(console.width - 12, 100)), 14)
        plt.theme("clear")
        # No plotext legend: at 80 columns it sits on the curves. The title names the colours
        # and the marks: a solid line against crosses, which a learner who cannot tell red from
        # green still tells apart.
        plt.plot(*_stepped(view.expected, base), color="green", marker="hd")
        plt.plot(*_stepped(view.got, base), color="red", marker="x")
        plt.xticks(_whole_ticks(base, base + max(len(view.expected), len(view.got)) - 1))
        plt.title(f"{view.label}: reference (green line), yours (red x)")
        plt.xlabel(view.axis)
        return Text.from_ansi(plt.build())
    table = Table(box=None, padding=(0, 2))
    for column in (view.axis, "expected", "yours"):
        table.add_column(column, justify="right")
    table.add_column("", width=1, no_wrap=True)  # the marker, in a column of its own: numbers stay aligned
    for step, expected, got, first in view.rows:
        table.add_row(step, expected, got, "◀" if first else "")
    return Group(Text(f"{view.label} around the first difference:", style="bold"), table)


def _plots(console: Console) -> bool:
    return console.color_system is not None and not console.no_color


def _stepped(values: list[float], base: int) -> tuple[list[float], list[float]]:
    """A per-step series as a staircase: each value holds until the next step (a loss scale
    that halves is a drop, not a ramp between two steps)."""
    xs: list[float] = []
    ys: list[float] = []
    for i, value in enumerate(values):
        if i:
            xs.append(i + base)
            ys.append(values[i - 1])
        xs.append(i + base)
        ys.append(value)
    return xs, ys


def _whole_ticks(first: int, last: int, most: int = 8) -> list[int]:
    """Whole-number step ticks, at most ``most`` of them, evenly spaced."""
    stride = max(1, -(-(last - first) // max(1, most - 1)))
    return list(range(first, last + 1, stride))


@_draws("ListView")
def _list(view: ListView, console: Console) -> Any:
    from rich import box

    # A light frame, and only the title wraps. At 80 columns the boxed five-column table folded
    # every title over three to five lines and split long topics ("mixed precision"), so on a
    # narrow terminal topic and difficulty share one column.
    narrow = console.width < 110
    columns = ("#",) * view.numbered + (("exercise", "title", "topic · difficulty", "status") if narrow else
                                        ("exercise", "title", "topic", "difficulty", "status"))
    table = Table(title="Exercises", expand=False, box=box.SIMPLE_HEAD, padding=(0, 1), collapse_padding=True)
    for column in columns:
        table.add_column(column, no_wrap=column != "title", overflow="fold" if column == "title" else "ellipsis")
    for r in view.rows:
        where = (f"{r.topic} · {r.difficulty}",) if narrow else (r.topic, r.difficulty)
        table.add_row(*(str(r.number),) * view.numbered, r.slug, r.title, *where,
                      Text(r.status, style=STATUS_COLOUR.get(r.status, "")))
    return table


@_draws("TextView")
def _text(view: TextView, console: Console) -> Any:
    if view.syntax:
        from rich.syntax import Syntax

        return _titled(Syntax(view.body, "python", line_numbers=False), Text(view.title), console)
    body = Text(view.body)
    for word in view.emphasis:
        body.highlight_words([word], style="italic")
    return _titled(body, Text(view.title), console)


def _titled(body: Any, title: Text, console: Console, **panel: Any) -> Panel:
    """A panel whose title is never cut: rich shortens a title wider than the frame to "…", so a
    long one (a long exercise title at 80 columns) goes inside, as the body's first line."""
    if title.cell_len + 6 <= console.width:
        return Panel(body, title=title, **panel)
    return Panel(Group(title, body), **panel)


@_draws("StatementView")
def _statement(view: StatementView, console: Console) -> Any:
    from rich.markdown import Markdown  # markdown-it: about 0.1 s to import, and only grind show needs it

    title = [Text(view.title, style="bold")] if view.show_title else []
    return Group(*title, Markdown(view.markdown))


@_draws("ProgressView")
def _progress(view: ProgressView, console: Console) -> Any:
    table = Table(title="Progress", caption=view.totals, expand=False)
    for column, justify in (("exercise", "left"), ("status", "left"), ("best time", "right"), ("attempts", "right"),
                            ("last practised", "left"), ("next review", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in view.rows:
        table.add_row(r.slug, Text(r.status, style=STATUS_COLOUR.get(r.status, "")), r.best, r.attempts, r.last,
                      Text(r.due, style="bold cyan" if r.due == "now" else ""))
    return table


@_draws("PracticeSummaryView")
def _practice(view: PracticeSummaryView, console: Console) -> Any:
    table = Table(title=view.headline, expand=False)
    for column in ("exercise", "result", "hints", "rating", "comes back"):
        table.add_column(column)
    for r in view.rows:
        table.add_row(r.slug, r.result, r.hints, r.rating, r.back)
    return table


@_draws("DoctorView")
def _doctor(view: DoctorView, console: Console) -> Any:
    """grind doctor: the isolation level in force, and what every level does and does not give."""
    parts: list[Any] = [Text.assemble(("Isolation level: ", "bold"),
                                      (view.level, "bold green" if view.grading_allowed else "bold yellow"))]
    parts += [_indented(line) for line in view.lines]
    if view.torch is not None:
        parts.append(Text(view.torch, style="" if view.torch_ok else "bold red"))
    parts += [Text(note) for note in view.notes]
    for level in view.levels:
        parts.append(Text(f"{'▶ ' if level.current else '  '}{level.name}", style="bold" if level.current else ""))
        parts.append(_hanging([("      - ", line) for line in level.lines]))
    parts += [Text(line) for line in view.after]
    return Group(*parts)


def _indented(line: str) -> Any:
    """A line whose leading spaces stay the margin of every line it wraps into."""
    from rich.padding import Padding

    text = line.lstrip(" ")
    return Padding(Text(text), (0, 0, 0, len(line) - len(text))) if text != line else Text(line)


def _hanging(rows: list[tuple[str, str]], lead_style: str = "") -> Any:
    """Lines that keep their indent when they wrap: each wrapped line starts under the text, not
    at the left edge (grind doctor's guarantees at 80 columns)."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    for lead, text in rows:
        grid.add_row(Text(lead, style=lead_style), Text(text))
    return grid


@_draws("ValidationView")
def _validation(view: ValidationView, console: Console) -> Any:
    """One row per exercise (cases, pitfalls caught, time), then every problem on its own line."""
    from judge.views.screens import VALIDATION_COLUMNS

    table = Table(title="Exercise validation", box=None)
    for column in VALIDATION_COLUMNS:
        table.add_column(column)
    for r in view.rows:
        table.add_row(Text(r.exercise), r.cases, r.caught, Text(r.corpus), Text(r.wrong_names), r.time,
                      Text(r.result, style="green" if r.ok else "red"))
    return Group(table, *(Text(line) for line in view.lines))


@_draws("ClassView")
def _class(view: ClassView, console: Console) -> Any:
    table = Table(title="Class results")
    for column in ("student", "status", "score", "pitfall, or why not graded"):
        table.add_column(column)
    for r in view.rows:
        table.add_row(Text(r.student), r.status, r.score, Text(r.note))
    return table


def line(text: str, tone: Tone) -> Text:
    return Text(text, style=TONE_STYLE[tone.value])


# -- the quiz -----------------------------------------------------------------------------------

@_draws("QuizListView")
def _quiz_list(view: Any, console: Console) -> Any:
    """By topic, each card's id and kind on one line and its question indented below: a table
    with a question column leaves the question a dozen characters at 80 columns."""
    from rich.padding import Padding

    parts: list[Any] = []
    topic = None
    for r in view.rows:
        if r.topic != topic:
            topic = r.topic
            parts.append(Text(("\n" if parts else "") + topic, style="bold underline"))
        practise = f" · grind run {r.exercise}" if r.exercise != "—" else ""
        parts.append(Text.assemble(("  " + r.id, "bold"), (f"  {r.kind}{practise}", "dim")))
        parts.append(Padding(Text(r.question), (0, 0, 0, 4)))
    parts.append(Text("\n" + view.footer, style="cyan"))
    return Group(*parts)


@_draws("QuizCardView")
def _quiz_card(view: Any, console: Console) -> Any:
    parts: list[Any] = [Text(view.question, style="bold")]
    if view.code:
        parts.append(Text(view.code, style="cyan"))
    if view.choices:  # a grid, so that a long choice wraps under its own text, not under its letter
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        for choice in view.choices:
            letter, _, text = choice.partition(" ")
            grid.add_row(Text(" " + letter, style="bold"), Text(text))
        parts.append(grid)
    parts.append(Text(view.how, style="dim"))
    return Panel(Group(*parts), title=Text(view.heading), title_align="left", expand=True)


@_draws("QuizFeedbackView")
def _quiz_feedback(view: Any, console: Console) -> Any:
    mark, style = ("✔ ", "bold green") if view.correct else ("✘ ", "bold red")
    parts: list[Any] = [Text(mark + view.verdict, style=style)]
    if view.why:
        parts.append(Text(view.why))
    parts += [Text(view.expected, style="bold"), Text(view.explanation)]
    parts += [line(item.text, item.tone) for item in view.lines]
    return Group(*parts, Text(""))


@_draws("QuizSummaryView")
def _quiz_summary(view: Any, console: Console) -> Any:
    if not view.rows:
        return Text(view.headline, style="bold")
    table = Table(expand=False)  # the headline above it, not as its title: a title wraps to the table's width
    for column in ("card", "result", "comes back"):
        table.add_column(column, overflow="fold")
    for r in view.rows:
        table.add_row(r.id, Text(r.result, style="green" if r.result == "right" else "red"), r.back)
    return Group(Text(view.headline, style="bold"), table)


@_draws("QuizProgressView")
def _quiz_progress(view: Any, console: Console) -> Any:
    table = Table(title="Quiz", caption=view.totals, expand=False)
    for column, justify in (("topic", "left"), ("cards", "right"), ("answered", "right"), ("right", "right"),
                            ("due", "right"), ("next review", "left")):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for r in view.rows:
        table.add_row(r.topic, r.cards, r.answered, r.right, Text(r.due, style="bold cyan" if r.due != "0" else ""),
                      r.next)
    return table


@_draws("QuizValidationView")
def _quiz_validation(view: Any, console: Console) -> Any:
    table = Table(title="Quiz validation", box=None)
    for column in ("deck", "cards", "result"):
        table.add_column(column)
    for r in view.rows:
        table.add_row(Text(r.deck), r.cards, Text(r.result, style="green" if r.ok else "red"))
    return Group(table, *(Text(problem) for problem in view.lines))
