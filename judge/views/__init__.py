"""What each screen shows, as plain data: one view model per screen, built from the core's data.

The output of grind has two renderings, a rich one for a terminal and plain lines for pipes
and logs. They used to be built side by side in one module, each from the raw verdict or
progress, and so could drift apart (a fact shown on a terminal and not in a log). Now every
screen is computed once, here, into an immutable model that holds every string a reader will
see (already made safe for the console's encoding, already worded), and
``judge.render`` draws that same model twice: ``judge.render.plain`` as lines of text,
``judge.render.styled`` with rich. Layout and colour are the renderers' business; content is
decided here and nowhere else.

The models are ``NamedTuple``s rather than frozen dataclasses: every ``grind run`` imports them,
and twenty frozen dataclasses took about 60 ms to define at import on the (busy, 2-core)
development machine, each generating six methods through ``exec``, against about 5 ms for the
same NamedTuples.

The screens live in two modules, imported by name (this package re-exports nothing): a
verdict's models in ``judge.views.verdict``, which every ``grind run`` needs, and every other
screen's in ``judge.views.screens``, which it does not.

This package imports neither rich nor typer (tests/test_architecture.py checks): a view model
can be built, inspected and tested without a terminal library, and the core never reaches a UI
dependency through it.
"""
