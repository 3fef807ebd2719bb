"""``show``: one view model on a console, drawn as the console can take it. A module of its own so
that the live screens (``live``) use it without importing the package that loads them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from judge.render import plain

if TYPE_CHECKING:
    from rich.console import Console


def show(console: Console, view: Any) -> None:
    """Print ``view``: rich's rendering on a terminal, plain lines elsewhere."""
    if console.is_terminal:
        from judge.render import styled  # rich: loaded only when a terminal is drawn on

        console.print(styled.renderable(view, console))
        return
    text = plain.text(view, console.width)
    if text:
        console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)
