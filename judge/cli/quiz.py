"""``grind quiz``: a session of cards, ``quiz list`` and ``quiz answer`` (the sub-app is added to
``judge.cli.app`` there); the session and the deck are shared with ``grind practice`` and
``grind progress``."""

from __future__ import annotations

import time
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from judge import commands
from judge.catalog import Catalog
from judge.cli.shared import _json, _state, console
from judge.errors import UsageError
from judge.models import Exercise
from judge.progress import Progress
from judge.status import ExitStatus


class QuizGroup(TyperGroup):
    """``grind quiz [TOPIC]`` is a session, ``grind quiz list`` and ``grind quiz answer`` are
    commands: a first word that names no command (or no word at all) is the session's."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = ["ask", *args]
        return super().parse_args(ctx, args)


quiz_app: typer.Typer = typer.Typer(
    cls=QuizGroup, no_args_is_help=False, subcommand_metavar="[TOPIC | list | answer] [ARGS]...",
    help="Quiz cards on the course's reasoning and numbers, scheduled like the exercises. "
         "'grind quiz [TOPIC] [--count N]' asks the due cards, then new ones (TOPIC: a card topic, an exercise, "
         "or an exercise's topic).")



def _quiz_cards(exercises: list[Exercise] | None = None, topic: str | None = None,
                quiet_topic: bool = False) -> list[Any]:
    """Every loadable card (broken decks named on stderr), narrowed to ``topic`` (see
    commands.quiz_cards)."""
    return commands.quiz_cards(lambda: exercises if exercises is not None else Catalog().load_all()[0], topic,
                               quiet_topic, lambda problem: typer.echo(f"grind: skipped a broken quiz card: "
                                                                       f"{problem.message}", err=True))


def _quiz_session(state: Progress, cards: list[Any], mode: str) -> Any:
    """Ask ``cards`` one by one in this terminal, then show how it went. Each answer is stored as
    it is graded; q, Ctrl-D or Ctrl-C end the session with what was answered kept."""
    from judge.quiz import run_session
    from judge.render import show
    from judge.views.screens import quiz_card_view, quiz_feedback_view, quiz_summary_view

    out = console()

    def ask(_hint: str) -> Optional[str]:
        try:
            return out.input("answer> ")
        except EOFError:
            out.print()
            return None
        except KeyboardInterrupt:
            out.print()
            return None

    def present(card: Any, index: int, total: int) -> None:
        show(out, quiz_card_view(card, index, total))

    def reveal(answered: Any, index: int, total: int) -> None:
        show(out, quiz_feedback_view(answered))

    def complain(message: str) -> None:
        out.print(message, style="yellow", markup=False, highlight=False, soft_wrap=not out.is_terminal)

    session = run_session(state, cards, ask=ask, present=present, reveal=reveal, complain=complain, mode=mode)
    show(out, quiz_summary_view(session, time.time()))  # also after Ctrl-D at the first card
    return session


@quiz_app.command("ask", hidden=True)
def quiz_ask(
    topic: Optional[str] = typer.Argument(None, help="Only cards on this topic, this exercise, or this exercise "
                                          "topic.", show_default=False),
    count: int = typer.Option(10, "--count", "-n", min=1, help="How many cards in this session."),
) -> None:
    """Ask the due cards, then new ones, one at a time."""
    from judge.quiz import pick_cards

    root, state = _state()
    chosen = _quiz_cards(topic=topic)
    if not chosen:
        raise UsageError("No quiz cards: the course has no quiz/*.toml decks.")
    if root is None:
        typer.echo(f"grind: no workspace here, so answers go to {state.path}", err=True)
    now = time.time()
    picked = pick_cards(state, chosen, now, count)
    if not picked:
        typer.echo(commands.nothing_due_cards(state, chosen, topic, now))
        return
    _quiz_session(state, picked, mode="quiz")


@quiz_app.command("list")
def quiz_list(
    topic: Optional[str] = typer.Argument(None, help="Only cards on this topic or exercise.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the cards as JSON."),
) -> None:
    """List the cards: id, topic, kind of answer, the exercise that practises it, the question."""
    cards = _quiz_cards(topic=topic)
    if as_json:
        _json([card.to_json() for card in cards])
        return
    from judge.render import show
    from judge.views.screens import quiz_list_view

    show(console(), quiz_list_view(cards))


@quiz_app.command("answer", context_settings={"ignore_unknown_options": True})
def quiz_answer(
    id: str = typer.Argument(..., help="The card's id ('grind quiz list' shows them).", show_default=False),  # noqa: A002
    answer: list[str] = typer.Argument(..., help="Your answer: a number (-0.01 and 1/13 work), a choice's letter, "
                                       "or a few words.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Grade one answer and record it (exit 0 right, 1 wrong)."""
    from judge.quiz import answer_card, find_card

    card = find_card(_quiz_cards(), id)
    _, state = _state()
    answered = answer_card(state, card, " ".join(answer), time.time(), "answer")
    if as_json:
        from judge.progress import iso

        _json({**answered.graded.to_json(), "next_review": iso(answered.review.due if answered.review else None)})
    else:
        from judge.render import show
        from judge.views.screens import quiz_feedback_view

        show(console(), quiz_feedback_view(answered))
    raise typer.Exit(int(ExitStatus.PASSED if answered.graded.correct else ExitStatus.FAILED))


# ---------------------------------------------------------------------------------------------
