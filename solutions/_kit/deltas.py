"""Pitfalls as composable deltas of one correct implementation.

Most mistakes in an optimizer or a training loop change one small piece of an otherwise correct
implementation. Write that implementation once in pitfalls.py (a base class whose methods are
the pieces, or a function with options), and each pitfall as its *delta*: the methods it
overrides, or the options it sets. Two deltas that touch different pieces compose into one
implementation making both mistakes, which is what grind runs to name a submission that makes
two at once; two that touch the same piece are alternatives, and do not combine::

    mistakes = Deltas.on_class(_Base, "SGD")     # impl: {"SGD": subclass of _Base with the delta}
    PITFALLS = mistakes.pitfalls([
        {"slug": "decay-ignored", "name": ..., "explanation": ..., "hint": ...,
         "delta": {"_decay": _no_decay}},
        ...
    ])
    combine = mistakes.combine                   # combine("a", "b"): both mistakes, or None
    COMBINE = "all"                              # which pairs grind may run (see the runner)

The base class lives in pitfalls.py, never here: the kit is shipped to learners' runs too, and
must hold no correct implementation of any exercise.
"""


def camel(*slugs):
    """A class name for a delta: ("decay-ignored", "shared-buffer") -> "DecayIgnoredSharedBuffer"."""
    return "".join(word.title() for slug in slugs for word in slug.split("-"))


class Deltas:
    """Builds each pitfall's ``impl`` from its ``"delta"`` and combines deltas.

    ``build(name, delta)`` returns the entry points of one wrong implementation: what a
    pitfall's ``impl`` holds (a function for a single function entry, else a dict from entry
    names to objects). ``name`` is a readable class name made from the slugs."""

    def __init__(self, build):
        self.build = build
        self._pitfalls = []

    @classmethod
    def on_class(cls, base, entry):
        """Deltas that override methods (or class attributes) of ``base``; the impl is
        ``{entry: subclass}`` (a bare class would be read as a module of entry points)."""
        return cls(lambda name, delta: {entry: type(name, (base,), dict(delta))})

    @classmethod
    def on_options(cls, make):
        """Deltas that are keyword options of one implementation: the impl is ``make(options)``."""
        return cls(lambda name, delta: make(dict(delta)))

    def pitfalls(self, pitfalls):
        """Fill in ``impl`` for every pitfall from its ``delta``, keep them for :meth:`combine`,
        and return the list (the module's ``PITFALLS``). A pitfall that already has an ``impl``
        (one that is no delta of the shared implementation) is left as it is."""
        for index, pitfall in enumerate(pitfalls):
            if "slug" not in pitfall:  # the judge's own wording for it (its check comes after this one)
                label = pitfall.get("name") or "unnamed"
                raise ValueError(f"PITFALLS[{index}] ({label!r}) is missing key 'slug'; add it to that entry "
                                 "of PITFALLS")
            if "impl" not in pitfall:
                if "delta" not in pitfall:
                    raise ValueError(f"pitfall {pitfall.get('slug')!r} has neither 'delta' nor 'impl'")
                pitfall["impl"] = self.build(camel(pitfall["slug"]), pitfall["delta"])
        self._pitfalls = list(pitfalls)
        return pitfalls

    def merged(self, *slugs):
        """The deltas of ``slugs`` merged, or None when two of them change the same piece."""
        deltas = {p["slug"]: p.get("delta") for p in self._pitfalls}
        merged = {}
        for slug in slugs:
            delta = deltas.get(slug)
            if delta is None or set(delta) & set(merged):
                return None
            merged.update(delta)
        return merged

    def combine(self, *slugs):
        """The entry points making every listed mistake at once, or None when two of them
        change the same piece (then they are alternatives, not a combination)."""
        merged = self.merged(*slugs)
        return None if merged is None else self.build(camel(*slugs), merged)
