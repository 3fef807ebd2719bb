"""HTML renderings for a notebook: the same view models that ``judge.render.plain`` prints as
lines and ``judge.render.styled`` draws with rich, as self-contained HTML fragments.

A notebook shows HTML, keeps it in the saved ``.ipynb`` and carries it through nbconvert, so a
fragment here uses inline styles only (no stylesheet to lose, no script a viewer may refuse) and
draws a per-step curve as inline SVG where a terminal draws a plotext chart: a picture without a
plotting library in the kernel. Every word comes from the view model; every learner-made string
(check names, messages, values, printed output) is escaped here, and nothing is ever read as
markup. The text/plain fallback a notebook stores beside the HTML is ``judge.render.plain``'s.

``html(view)`` returns the fragment; like the other renderers it dispatches on the model's class
name, so importing this loads no screen's models.
"""

from __future__ import annotations

import math
from html import escape
from typing import TYPE_CHECKING, Any, Callable

from judge.models import CheckStatus, Status

if TYPE_CHECKING:
    from judge.views.screens import StatementView, TextView
    from judge.views.verdict import SeriesView, VerdictView

STATUS_COLOUR = {
    Status.PASSED: "#1a7f37",
    Status.FAILED: "#cf222e",
    Status.FORBIDDEN: "#8250df",
    Status.ERROR: "#9a6700",
    Status.TIMEOUT: "#9a6700",
    Status.CRASHED: "#9a6700",
}
MARK = {CheckStatus.PASSED: ("✔", "#1a7f37"), CheckStatus.FAILED: ("✘", "#cf222e"),
        CheckStatus.ERROR: ("✘", "#cf222e"), CheckStatus.NOT_RUN: ("·", "#6e7781")}
EXPECTED_COLOUR, GOT_COLOUR = "#1a7f37", "#cf222e"
BOX = ("font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; font-size: 14px; line-height: 1.45; "
       "color: #1f2328; background: #ffffff; border: 1px solid #d0d7de; border-radius: 6px; "
       "padding: 10px 14px; max-width: 920px;")
# Notebook front ends style tables their own way (JupyterLab right-aligns cells and stripes rows):
# every cell and row drawn here says how it is laid out (``_row``).
CELL = "text-align: left; vertical-align: top; border: none; background: transparent; padding: 1px 10px 1px 0;"
MONO = "font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px;"

_DRAW: dict[str, Callable[[Any], str]] = {}


def _draws(model: str) -> Callable[[Callable[[Any], str]], Callable[[Any], str]]:
    def register(draw: Callable[[Any], str]) -> Callable[[Any], str]:
        _DRAW[model] = draw
        return draw
    return register


def html(view: Any) -> str:
    """``view`` as an HTML fragment."""
    draw = _DRAW.get(type(view).__name__)
    if draw is None:
        raise TypeError(f"no HTML rendering for {type(view).__name__}")
    return draw(view)


def _text(value: str) -> str:
    """Learner-made or grind-made text, escaped, its line breaks kept."""
    return escape(value).replace("\n", "<br>")


def message_box(title: str, body: str, colour: str = "#9a6700") -> str:
    """A short notice in the verdict's frame: an unknown exercise, a refused solution."""
    return (f'<div class="grind-message" style="{BOX} border-left: 6px solid {colour};">'
            f'<div style="font-weight: 600; color: {colour};">{escape(title)}</div>'
            f'<div>{_text(body)}</div></div>')


@_draws("VerdictView")
def _verdict(view: VerdictView) -> str:
    colour = STATUS_COLOUR[view.status]
    out = [f'<div class="grind-verdict" style="{BOX} border-left: 6px solid {colour};">',
           '<div style="display: flex; justify-content: space-between; align-items: baseline; gap: 12px;">',
           f'<span style="font-weight: 600;">{escape(view.title)}</span>',
           f'<span class="grind-status" style="background: {colour}; color: #ffffff; border-radius: 4px; '
           f'padding: 1px 8px; font-weight: 700; letter-spacing: 0.04em;">{escape(view.status_word)}</span></div>']
    out += [f'<div style="color: #9a6700;">{_text(note)}</div>' for note in view.lead]
    if view.message:
        out.append(f'<div style="margin: 6px 0; font-weight: 600;">{_text(view.message)}</div>')
    out += _checks_html(view) + _failure_html(view)
    if view.series is not None:
        out.append(curve(view.series))
    for block in view.diagnoses:
        out.append('<div class="grind-diagnosis" style="margin-top: 8px; padding: 6px 10px; background: #fff8f8; '
                   'border: 1px solid #ffd8d3; border-radius: 4px;">'
                   f'<span style="font-weight: 600;">{escape(block.label)}:</span> '
                   f'<span class="grind-pitfall" style="font-weight: 700; color: #cf222e;">{escape(block.name)}</span>')
        out += [f'<div>{_text(line)}</div>' for line in block.body]
        out.append('</div>')
    if view.output:
        out.append(f'<pre style="{MONO} color: #6e7781; margin: 6px 0; white-space: pre-wrap;">'
                   f'{escape(chr(10).join(view.output))}</pre>')
    out += [f'<div style="color: #9a6700;">{_text(note)}</div>' for note in view.notices]
    if view.footer:
        out.append(f'<div style="margin-top: 8px; color: #0969da;">{_text(view.footer)}</div>')
    out.append('</div>')
    return "".join(out)


def _checks_html(view: VerdictView) -> list[str]:
    if not view.checks:
        return []
    out = ['<table class="grind-checks" style="border-collapse: collapse; margin: 4px 0;">']
    for row in view.checks:
        mark, mark_colour = MARK[row.status]
        out.append(_row((mark, f"color: {mark_colour};"), (escape(row.name), MONO),
                        (escape(row.kind), "color: #6e7781;"), (_text(row.message), "")))
    out.append('</table>')
    return out


def _failure_html(view: VerdictView) -> list[str]:
    """The failure shown in detail, then its entries around the first difference."""
    out = []
    if view.failure is not None and view.details:
        note = f' <span style="font-weight: 400; color: #6e7781;">{escape(view.failure_note)}</span>' \
            if view.failure_note else ""
        out.append(f'<div style="margin-top: 8px; font-weight: 600;">First failure: '
                   f'<span style="{MONO}">{escape(view.failure)}</span>{note}</div>')
        out.append('<table class="grind-failure" style="border-collapse: collapse;">')
        for label, value in view.details:
            out.append(_row((escape(label), "font-weight: 600; white-space: nowrap; padding-left: 12px;"),
                            (_text(value), f"{MONO} overflow-wrap: anywhere;")))
        out.append('</table>')
    if view.entries is not None:
        out.append(f'<div style="margin-top: 6px; font-weight: 600;">{escape(view.entries.heading)}</div>'
                   '<table class="grind-entries" style="border-collapse: collapse;">')
        out.append(_row(("index", "font-weight: 600;"), ("expected", "font-weight: 600;"),
                        ("yours", "font-weight: 600;"), ("", "")))
        for index, expected, got, first in view.entries.rows:
            out.append(_row((escape(index), MONO), (escape(expected), MONO), (escape(got), MONO),
                            ("◀ first difference" if first else "", "color: #cf222e;")))
        out.append('</table>')
    return out


def curve(view: SeriesView, width: int = 600, height: int = 230) -> str:
    """The reference's per-step values and the learner's as two step lines in SVG, with the
    first differing step marked: what a terminal with colour plots, and the rows around that
    step under it (a picture for the shape, the numbers for the detail)."""
    left, right, top, bottom = 64, 12, 28, 34
    base = view.first_step
    steps = max(len(view.expected), len(view.got), 1)
    finite = [v for v in (*view.expected, *view.got) if isinstance(v, (int, float)) and math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if high == low:
        low, high = low - 1.0, high + 1.0
    pad = (high - low) * 0.06
    low, high = low - pad, high + pad

    def x(i: float) -> float:
        return left + (width - left - right) * (i / max(steps - 1, 1))

    def y(v: float) -> float:
        return top + (height - top - bottom) * (1 - (v - low) / (high - low))

    def path(values: list[float]) -> str:
        """A staircase (each value holds until the next step), broken where a value is not finite."""
        parts, pen = [], False
        for i, v in enumerate(values):
            if not (isinstance(v, (int, float)) and math.isfinite(v)):
                pen = False
                continue
            if pen:
                parts.append(f"H{x(i):.1f}V{y(v):.1f}")
            else:
                parts.append(f"M{x(i):.1f},{y(v):.1f}")
                pen = True
        return "".join(parts)

    first = next((int(r[0]) - base for r in view.rows if r[3]), None)
    svg = [f'<svg class="grind-curve" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(view.label)}: reference and yours, '
           'per step" style="display: block; margin: 8px 0;">',
           f'<rect x="{left}" y="{top}" width="{width - left - right}" height="{height - top - bottom}" '
           'fill="#f6f8fa" stroke="#d0d7de"/>']
    for fraction in (0.0, 0.5, 1.0):
        value = low + (high - low) * fraction
        svg.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" font-size="11" text-anchor="end" '
                   f'fill="#6e7781">{escape(_short(value))}</text>')
    for i in _ticks(steps):
        svg.append(f'<text x="{x(i):.1f}" y="{height - bottom + 15}" font-size="11" text-anchor="middle" '
                   f'fill="#6e7781">{i + base}</text>')
    svg.append(f'<text x="{(left + width - right) / 2:.0f}" y="{height - 4}" font-size="11" text-anchor="middle" '
               'fill="#6e7781">step</text>')
    if first is not None:
        svg.append(f'<line x1="{x(first):.1f}" y1="{top}" x2="{x(first):.1f}" y2="{height - bottom}" '
                   'stroke="#6e7781" stroke-dasharray="4 3"/>')
        svg.append(f'<text x="{x(first) + 4:.1f}" y="{top + 12}" font-size="11" fill="#6e7781">first difference: '
                   f'step {first + base}</text>')
    svg.append(f'<path d="{path(view.expected)}" fill="none" stroke="{EXPECTED_COLOUR}" stroke-width="2"/>')
    svg.append(f'<path d="{path(view.got)}" fill="none" stroke="{GOT_COLOUR}" stroke-width="2" '
               'stroke-dasharray="6 3"/>')
    svg.append(f'<text x="{left}" y="16" font-size="12" font-weight="600" fill="#1f2328">{escape(view.label)}: '
               f'<tspan fill="{EXPECTED_COLOUR}">reference (solid)</tspan>, '
               f'<tspan fill="{GOT_COLOUR}">yours (dashed)</tspan></text>')
    svg.append('</svg>')
    align = "text-align: right;"
    head = _row(("step", align), ("expected", align), ("yours", align), ("", ""), style="color: #6e7781;")
    rows = "".join(_row((escape(step), align), (escape(expected), align), (escape(got), align),
                        ("◀" if mark else "", ""), style="font-weight: 700;" if mark else "")
                   for step, expected, got, mark in view.rows)
    table = f'<table style="border-collapse: collapse; {MONO}">{head}{rows}</table>'
    return "".join(svg) + table


def _row(*cells: tuple[str, str], style: str = "") -> str:
    """One table row of (HTML content, extra style) cells, laid out whatever the page's CSS says."""
    tds = "".join(f'<td style="{CELL} {extra}">{content}</td>' for content, extra in cells)
    return f'<tr style="background: transparent; {style}">{tds}</tr>'


def _short(value: float) -> str:
    return f"{value:.4g}"


def _ticks(steps: int, most: int = 8) -> list[int]:
    stride = max(1, -(-(steps - 1) // max(1, most - 1)))
    return list(range(0, steps, stride))


@_draws("TextView")
def _text_view(view: TextView) -> str:
    """A hint (prose) or the reference solution (code)."""
    body = (f'<pre style="{MONO} background: #f6f8fa; padding: 8px; border-radius: 4px; overflow-x: auto;">'
            f'{escape(view.body)}</pre>' if view.syntax else f'<div>{_text(view.body)}</div>')
    return (f'<div class="grind-text" style="{BOX} border-left: 6px solid #0969da;">'
            f'<div style="font-weight: 600; margin-bottom: 4px;">{escape(view.title)}</div>{body}</div>')


@_draws("StatementView")
def _statement(view: StatementView) -> str:
    """A statement is Markdown; a notebook renders Markdown itself (``_repr_markdown_``), so the
    HTML here is only the fallback for a front end that shows HTML and not Markdown."""
    title = f'<div style="font-weight: 600;">{escape(view.title)}</div>' if view.show_title else ""
    return f'<div class="grind-statement" style="{BOX}">{title}<pre style="white-space: pre-wrap;">' \
           f'{escape(view.markdown)}</pre></div>'
