"""Honest numbers in a mismatch: what the learner reads must be true and must look different."""

from __future__ import annotations

import numpy as np

from judge.compare import compare, pair_text
from judge.models import Tolerance


def tol(want: str, have: str) -> Tolerance:
    return Tolerance(1e-5, 1e-6)


def test_values_that_differ_are_written_shortest_and_differently() -> None:
    """One formatter (judge.numbers): no trailing zeros, whole numbers as integers, and always
    enough digits for two different values to read differently."""
    assert pair_text(2.20561, 2.206) == ("2.20561", "2.206")
    a, b = pair_text(0.1, 0.1 + 1e-12)
    assert a != b
    assert pair_text(float("inf"), 3.0) == ("inf", "3")  # a whole number reads as an integer
    assert pair_text(2.0**23, 2.0**24) == ("8388608", "16777216")  # not 8.38861e+06
    assert pair_text(262144.5, 262145.5) == ("262144.5", "262145.5")  # never a fraction read as whole
    assert pair_text(0.0, 1e-9) == ("0", "1e-09")
    assert pair_text(0.5, 0.0055000000000000005) == ("0.5", "0.0055")  # not 0.500000 / ...0000005


def test_numbers_are_as_short_as_the_tolerance_allows() -> None:
    from judge.numbers import number_text

    assert number_text(0.6615021643756871, 1e-4) == "0.6615"  # within a tenth of rtol
    assert abs(float(number_text(0.6615021643756871, 1e-5)) - 0.6615021643756871) <= 1e-6 * 0.67
    assert number_text(0.6615021643756871, 0) == "0.6615021643756871"  # exact on request
    assert number_text(3) == "3" and number_text(3.0) == "3" and number_text(float("nan")) == "nan"
    assert number_text(1234567.5, 1e-4) == "1234570"  # positional, not 1.23457e+06


def test_no_relative_error_against_an_expected_zero() -> None:
    mismatch = compare({"g": np.array([0.0, 1.0])}, {"g": np.array([0.5, 1.0])}, tol)
    assert mismatch is not None
    assert mismatch.max_abs_err == 0.5 and mismatch.max_rel_err is None


def test_matching_infinities_are_equal_and_do_not_inflate_the_error() -> None:
    assert compare({"g": np.array([np.inf, 1.0])}, {"g": np.array([np.inf, 1.0])}, tol) is None
    mismatch = compare({"g": np.array([np.inf, 1.0])}, {"g": np.array([np.inf, 2.0])}, tol)
    assert mismatch is not None and mismatch.max_abs_err == 1.0 and mismatch.max_rel_err == 1.0
    assert "expected 1, got 2" in mismatch.message


def test_an_infinity_where_a_number_was_expected_is_an_infinite_error() -> None:
    mismatch = compare({"g": np.array([1.0])}, {"g": np.array([np.inf])}, tol)
    assert mismatch is not None and mismatch.max_abs_err == float("inf")


def test_named_entries_are_not_a_sequence_over_steps() -> None:
    """One value per named parameter is compared and named, but not shown as a curve over steps."""
    want, have = {"weight decay": np.array([0.1, 0.0, 0.0, 0.1])}, {"weight decay": np.array([0.1, 0.0, 0.1, 0.1])}
    plain = compare(want, have, tol)
    assert plain is not None and plain.series is not None
    entries = {"weight decay": [("0.weight", []), ("0.bias", []), ("1.weight", []), ("2.weight", [])]}
    named = compare(want, have, tol, 1, entries)
    assert named is not None and named.series is None
    assert "first differs at 1.weight" in named.message


def test_matches_is_compare_without_the_message() -> None:
    """The diagnosis's fast check agrees with compare() on every kind of pair it meets: equal,
    within and beyond tolerance, NaN, infinities of either sign, other shapes, booleans, integers,
    missing keys."""
    import numpy as np

    from judge.compare import compare, matches
    from judge.models import Tolerance

    rng = np.random.default_rng(0)

    def tolerance(_want: str, _have: str) -> Tolerance:
        return Tolerance(rtol=1e-5, atol=1e-8)

    specials = [np.nan, np.inf, -np.inf, 0.0, 1e-9, 1e30]
    seen = set()
    for trial in range(600):
        shape = (int(rng.integers(1, 4)),) if trial % 7 else ()
        want = rng.standard_normal(shape).astype(rng.choice([np.float32, np.float64]))
        have = want.astype(np.float64).copy()
        kind = trial % 9
        if kind == 1:
            have = have * (1 + 1e-7)
        elif kind == 2:
            have = have + 1e-3
        elif kind in (3, 4) and have.ndim:
            have[0], want[0] = rng.choice(specials), rng.choice(specials)
        elif kind == 5:
            have = np.zeros((2, 2))
        elif kind == 6:
            have = have > 0
        elif kind == 7:
            want, have = np.round(want * 10).astype(np.int64), np.round(have * 10).astype(np.int64)
        expected, got = {"x": np.asarray(want)}, ({"x": np.asarray(have)} if kind != 8 else {"y": np.asarray(have)})
        slow = compare(expected, got, tolerance) is None
        assert matches(expected, got, tolerance) == slow, (kind, want, have)
        seen.add(slow)
    assert seen == {True, False}


def test_a_raised_error_matches_a_pitfall_only_with_the_same_message() -> None:
    """GradScaler raises AssertionError both for update() without an inf check and for unscale_
    without a scale: a pitfall that raised the first does not explain a learner who raised the second."""
    from judge.diagnose import same_behaviour
    from judge.worker.protocol import CaseRecord, ErrorInfo

    def raised(message: str) -> CaseRecord:
        return CaseRecord("error", error=ErrorInfo("AssertionError", message, 20, "scaler.unscale_(optimizer)"))

    tolerance = lambda case, key: Tolerance(0.0, 0.0)  # noqa: E731
    learner = raised("Attempted unscale_ but _scale is None.")
    assert not same_behaviour(raised("No inf checks were recorded prior to update."), {}, learner, {}, tolerance)
    assert same_behaviour(raised("Attempted unscale_ but _scale is None."), {}, learner, {}, tolerance)


def test_an_error_in_the_learners_own_words_is_named_by_its_type_when_no_pitfall_has_them() -> None:
    """A learner's own assert text for a known mistake still names it; but when one pitfall raises
    the learner's very message, that one wins over another raising only the same type."""
    from judge.diagnose import explain
    from judge.worker.protocol import CaseRecord, ErrorInfo, PitfallMeta

    def raised(kind: str, message: str) -> dict[str, CaseRecord]:
        return {"step": CaseRecord("error", error=ErrorInfo(kind, message, 3, "assert ..."))}

    def pitfall(slug: str) -> PitfallMeta:
        return PitfallMeta(slug=slug, name=slug, explanation="", hint="")

    tolerance = lambda case, key: Tolerance(0.0, 0.0)  # noqa: E731
    ref_obs = {"step": {"x": np.ones(2)}}
    learner = raised("ValueError", "my own words: shapes differ")
    other = raised("ValueError", "operands could not be broadcast")
    unrelated = raised("KeyError", "'exp_avg'")

    def named(candidates: list) -> list[str]:
        found = explain(["step"], ["step"], ref_obs, learner, {}, candidates, tolerance)
        return [] if found is None else [p.slug for f in found.findings for p in f.pitfalls]

    assert named([([pitfall("unrelated")], unrelated, {}), ([pitfall("broadcast")], other, {})]) == ["broadcast"]
    assert named([([pitfall("unrelated")], unrelated, {})]) == []
    exact = raised("ValueError", "my own words: shapes differ")
    assert named([([pitfall("broadcast")], other, {}), ([pitfall("exact")], exact, {})]) == ["exact"]


def _fit_case():
    """Three instances; the learner differs from the reference on each."""
    from judge.worker.protocol import CaseRecord, PitfallMeta

    ok = CaseRecord("ok")
    names = ["a", "b", "c"]
    ref = {n: {"x": np.array([1.0, 2.0])} for n in names}
    learner = {"a": {"x": np.array([1.0, 2.5])}, "b": {"x": np.array([1.0, 3.0])}, "c": {"x": np.array([0.5, 2.0])}}

    def candidate(slug: str, values: dict[str, list[float]]):
        return ([PitfallMeta(slug=slug, name=slug, explanation="", hint="")], {n: ok for n in names},
                {n: {"x": np.array(values.get(n, ref[n]["x"].tolist()))} for n in names})

    return names, ref, {n: ok for n in names}, learner, candidate


def test_a_pitfall_that_only_coincides_on_one_check_is_not_named() -> None:
    """Near a known mistake but not it: the pitfall agrees with the learner on one instance and
    predicts other wrong values on the two others. Naming it would send the learner after a
    mistake they did not make; the explanation names nothing and says which came closest and
    what it would have given where the learner's answer parts from it."""
    from judge.diagnose import explain

    names, ref, cases, learner, candidate = _fit_case()
    tolerance = lambda a, b: Tolerance(1e-9, 1e-12)  # noqa: E731
    near = candidate("near", {"a": [1.0, 2.5], "b": [1.0, 2.7], "c": [0.7, 2.0]})
    found = explain(names, names, ref, cases, learner, [near], tolerance)
    assert found is not None and found.findings == []
    assert found.closest is not None and found.closest.pitfall.slug == "near"
    assert (found.closest.instance, found.closest.index) == ("b", (1,))
    assert (found.closest.would_give, found.closest.gave, found.closest.expected) == (2.7, 3.0, 2.0)
    assert (found.closest.explains, found.closest.against) == (1, 2)


def test_a_pitfall_that_fits_where_it_shows_is_named_for_what_it_explains() -> None:
    """One known mistake plus one of the learner's own: the pitfall agrees on two instances and
    equals the reference on the third (where the learner's other mistake shows). It fits, and is
    named as explaining part of the answer, the rest left unexplained."""
    from judge.diagnose import explain

    names, ref, cases, learner, candidate = _fit_case()
    tolerance = lambda a, b: Tolerance(1e-9, 1e-12)  # noqa: E731
    fits = candidate("fits", {"a": [1.0, 2.5], "b": [1.0, 3.0]})
    found = explain(names, names, ref, cases, learner, [fits], tolerance)
    assert found is not None and [p.slug for f in found.findings for p in f.pitfalls] == ["fits"]
    assert found.findings[0].explains == [("a", "x"), ("b", "x")]
    assert found.unexplained == [("c", "x")] and not found.complete


def test_within_the_tolerance_is_agreement_and_outside_it_is_not() -> None:
    """The same near pitfall fits once the exercise's tolerance covers its distance from the
    learner (0.3 on 3.0 and 0.2 on 0.5 are inside rtol 0.5), and not at a tight one."""
    from judge.diagnose import explain

    names, ref, cases, learner, candidate = _fit_case()
    near = candidate("near", {"a": [1.0, 2.5], "b": [1.0, 2.7], "c": [0.7, 2.0]})
    loose = explain(names, names, ref, cases, learner, [near], lambda a, b: Tolerance(0.5, 0.0))
    assert loose is not None and loose.exact  # agrees on every failing instance, within the tolerance
    tight = explain(names, names, ref, cases, learner, [near], lambda a, b: Tolerance(1e-3, 0.0))
    assert tight is not None and not tight.findings


def test_the_closest_text_says_what_the_pitfall_would_give_and_where() -> None:
    """The sentence a learner reads when nothing is named: the pitfall's name, its value, theirs,
    and the check, observation and element, with the expected value."""
    from judge.diagnose import Near
    from judge.judging import _closest_text
    from judge.worker.protocol import Instance, PitfallMeta

    meta = PitfallMeta(slug="adam-bias-correction", name="Adam's bias correction", explanation="", hint="")
    near = Near(meta, "random[0]", "params per step", (2, 0), 0.5, 0.47, 0.4, explains=3, against=29)
    instances = [Instance(name="random[0]", case="random", kind="random", params={}, input=None)]
    text = _closest_text(near, instances, 0)
    assert text.startswith("No known mistake matches your answer; the closest is Adam's bias correction "
                           "(adam-bias-correction), which would give 0.5 where you gave 0.47"), text
    assert "(random, params per step, step 2, entry 0; expected 0.4)" in text, text
    assert "agrees with yours on 3 of the observations that differ, and predicts something else on 29" in text


def test_the_closest_mistake_is_found_on_scalars_and_flags_too() -> None:
    """A 0-d observation and a True/False one: the closest pitfall is still reported, with the
    element's values, and nothing raises."""
    from judge.diagnose import explain
    from judge.worker.protocol import CaseRecord, PitfallMeta

    ok = CaseRecord("ok")
    ref = {"a": {"total": np.array(5.0), "accepted": np.array(True)}}
    learner = {"a": {"total": np.array(4.0), "accepted": np.array(False)}}
    near = ([PitfallMeta(slug="near", name="near", explanation="", hint="")], {"a": ok},
            {"a": {"total": np.array(3.0), "accepted": np.array(True)}})
    found = explain(["a"], ["a"], ref, {"a": ok}, learner, [near], lambda a, b: Tolerance(1e-9, 1e-12))
    assert found is not None and found.findings == [] and found.closest is not None
    assert (found.closest.key, found.closest.index, found.closest.would_give, found.closest.gave) == \
        ("total", (), 3.0, 4.0)
