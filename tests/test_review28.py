"""Review of issue 28's two changes (a hostile learner's attacks, tests/adversarial/review28/).

- bf16-rounding for marks: a 16-bit float tensor made under another of the CPU's backend keys
  (oneDNN's ``empty`` for ``layout=torch._mkldnn``) was past the dtype poison, which sat at the
  CPU key only, and only aten's operators (``inductor::_alloc_from_pool`` makes a 16-bit view of
  a uint8 pool that ``copy_`` rounds into); numpy's float16 reached by ``np.min_scalar_type(1.0)`` needs no spelling the scan
  knows (xfail: the scan's known deterrent class, reached without even a run-time spelling).
- rank0-checkpoint: grind's reader of the kept checkpoint capped each storage but not their
  sum, so a small zip of deflated storages made grind's own process hold gigabytes.
- honest answers in other styles still pass.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.grade import grade
from judge.models import Status
from judge.worker import checkpoint

HERE = Path(__file__).resolve().parent / "adversarial" / "review28"


def _marked(slug: str, name: str) -> object:
    return grade(Catalog().get(slug), HERE / name, marked=True)


def test_a_16_bit_tensor_made_under_the_mkldnn_key_ends_a_marked_bf16_run() -> None:
    verdict = _marked("bf16-rounding", "bf16_mkldnn_layout.py")
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)


def test_a_16_bit_view_made_by_an_operator_outside_aten_ends_a_marked_bf16_run() -> None:
    """inductor::_alloc_from_pool takes a dtype and makes a view of a uint8 pool; copy_ rounds into it."""
    verdict = _marked("bf16-rounding", "bf16_inductor_alloc_from_pool.py")
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)


def test_numpys_float16_by_min_scalar_type_is_refused_for_marks() -> None:
    verdict = _marked("bf16-rounding", "bf16_numpy_min_scalar_type.py")
    assert verdict.status is not Status.PASSED, verdict.message


def test_structs_half_format_built_at_run_time_is_forbidden_for_marks() -> None:
    """CPython's encoder (PyFloat_Pack2) is absent from a marked bf16-rounding run: the call ends it."""
    verdict = _marked("bf16-rounding", "bf16_struct_format_built_at_run_time.py")
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert "torch.float16" in verdict.message, verdict.message
    assert "struct's or memoryview's 'e' format" in verdict.stderr, verdict.stderr  # what the code reached


@pytest.mark.parametrize("name", ["bf16_nnc_interpreter_float16.py", "bf16_nnc_interpreter_both.py"])
def test_torchs_nnc_interpreter_is_forbidden_for_marks(name: str) -> None:
    """NNC's IR interpreter rounds with c10::Half past the dispatcher (a review's pass): absent now."""
    verdict = _marked("bf16-rounding", name)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)


@pytest.mark.parametrize("name", ["bf16_dtype_field_rewritten_through_a_raw_storage.py",
                                  "bf16_dtype_field_rewritten_through_set_cdata.py"])
def test_torchs_raw_address_doors_are_refused_for_marks(name: str) -> None:
    """A storage over any address (or an object from a raw pointer) is a write anywhere: a review
    turned an int16 tensor's dtype field into bfloat16's, past every operator, and rounded into it
    with a mixed-dtype kernel (native_batch_norm.out), from a thread the checks' watch does not see."""
    verdict = _marked("bf16-rounding", name)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert "Not accepted for marks" in verdict.message, verdict.message


@pytest.mark.parametrize(("slug", "name", "api"), [
    ("adam", "adam_sparse_functional.py", "torch.optim._functional.sparse_adam"),
    ("sgd-momentum", "sgd_via_rmsprop.py", "torch.optim.RMSprop"),
    ("sgd-momentum", "sgd_via_adam.py", "torch.optim.Adam"),
    ("adam", "adam_via_nadam_rmsprop.py", "torch.optim.NAdam"),
])
def test_torchs_maths_through_an_optimizer_the_exercise_did_not_name_is_forbidden(slug: str, name: str,
                                                                                   api: str) -> None:
    """SparseAdam's update is Adam's; RMSprop with alpha=1, eps=1 is heavy-ball SGD; Adam with
    betas=(momentum, 0) and a huge eps is SGD's velocity; NAdam with one RMSprop taking back its
    extra term is Adam: each passed for marks, so every torch optimizer is named now."""
    verdict = _marked(slug, name)
    assert verdict.status is Status.FORBIDDEN and f"Forbidden API: {api}" in verdict.message, verdict.message


@pytest.mark.parametrize("source", [
    'import torch\ntorch._C._set_fp32_precision_setter("mkldnn", "all", "bf16")\n',
    'import torch\ntorch._C._set_float32_matmul_precision("medium")\n',
    'import torch\nwith torch.backends.mkldnn.flags(enabled=True, fp32_precision="bf16"):\n    pass\n',
])
def test_every_spelling_of_a_bf16_float32_matmul_is_refused_for_bf16_rounding(source: str) -> None:
    """On a CPU with AMX, oneDNN rounds a float32 matmul's inputs to bfloat16 under these settings."""
    from judge.introspection import names_a_forbidden_api

    found = names_a_forbidden_api(source, tuple(Catalog().get("bf16-rounding").forbidden))
    assert any("rounded to 16 bits" in what for what, _ in found), found


def test_an_honest_int32_and_python_loop_bf16_answer_passes_for_marks() -> None:
    verdict = _marked("bf16-rounding", "bf16_honest_int32_python_loop.py")
    assert verdict.status is Status.PASSED, (verdict.status, verdict.message)


def _deflated_storages(count: int, each: int) -> bytes:
    """A torch.save-shaped zip whose ``count`` storages each inflate to ``each`` zero bytes."""
    import torch

    saved = io.BytesIO()
    torch.save({f"k{i}": torch.zeros(1) for i in range(count)}, saved)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(saved.getvalue())) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if "/data/" in info.filename:
                dst.writestr(info.filename, bytes(each), compress_type=zipfile.ZIP_DEFLATED)
            else:
                dst.writestr(info.filename, src.read(info))
    return out.getvalue()


def test_storages_that_inflate_past_a_checkpoints_cap_together_are_not_a_state_dict(monkeypatch) -> None:
    """Each storage under the cap, their sum over it: grind holds no more than one checkpoint's bytes."""
    monkeypatch.setattr(checkpoint, "MOST_BYTES", 1 << 20)
    assert checkpoint.read_state_dict(_deflated_storages(1, 1 << 19)) is not None  # the control: under the cap
    assert checkpoint.read_state_dict(_deflated_storages(4, 1 << 19)) is None


def test_a_pickle_far_longer_than_a_state_dicts_is_not_read(monkeypatch) -> None:
    """Its opcodes would run in grind's own process, outside every time limit."""
    program = b"\x80\x02}" + b"N" * (checkpoint.PICKLE_BYTES + 1) + b"."
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("archive/data.pkl", program)
    calls = []
    monkeypatch.setattr(checkpoint.pickletools, "genops", lambda data: calls.append(1) or iter(()))
    assert checkpoint.read_state_dict(out.getvalue()) is None
    assert calls == []


def test_a_forbidden_builtin_named_through_torch_vf_is_refused_in_practice() -> None:
    """Issue 33's review: torch._VF._fused_sgd_ handed to functools.partial passed sgd-momentum
    in practice (a builtin called from C is past the profile hook, and torch._VF's attributes are
    read-only, so no stand-in sits there). Refused before any child runs now."""
    path = HERE.parent / "review34" / "vf_partial_sgd.py"
    verdict = grade(Catalog().get("sgd-momentum"), path)
    assert verdict.status == Status.FORBIDDEN, verdict.message
    assert "_fused_sgd_" in verdict.message and verdict.learner_line == 6


_FUSED_SPELLINGS = [
    "torch._VF._fused_sgd_", "torch._VF.vf._fused_sgd_", "type(torch._C._VariableFunctions)._fused_sgd_",
    "torch._C._VariableFunctionsClass._fused_sgd_", "torch.nn.functional._VF._fused_sgd_",
    'vars(torch._VF)["vf"]._fused_sgd_', 'torch._VF.__getattr__("_fused_sgd_")',
    "torch.ops.aten._fused_sgd_.default._op", "torch._ops.ops.aten._fused_sgd_.default._op",
]


@pytest.mark.parametrize("spelling", _FUSED_SPELLINGS)
def test_every_plain_road_to_a_forbidden_private_builtin_is_refused_in_practice(spelling: str) -> None:
    """A second look found fourteen more plain spellings of the fused builtin (its module's own
    ``_VF``, the class of ``_VariableFunctions``, an operator overload's ``_op``, a namespace's
    ``__dict__``...), each passing practice through functools.partial. The practice scan now
    refuses a forbidden API's private last name wherever it is spelled, as marks refuse any."""
    from judge.static_checks import static_verdict

    exercise = Catalog().get("sgd-momentum")
    source = (HERE.parent / "review34" / "vf_partial_sgd.py").read_text()
    lines = source.splitlines()
    assert lines[5].startswith("_F = ")
    lines[5] = f"_F = {spelling}"
    verdict = static_verdict(exercise, "\n".join(lines) + "\n", "vf.py")
    assert verdict is not None and verdict.status == Status.FORBIDDEN and verdict.learner_line == 6
    lines[5] = "from torch._VF import _fused_sgd_ as _F"
    verdict = static_verdict(exercise, "\n".join(lines) + "\n", "vf.py")
    assert verdict is not None and verdict.status == Status.FORBIDDEN


def test_honest_answers_that_name_torch_vf_or_private_names_of_their_own_pass_the_scan() -> None:
    """The private-name rule refuses only the forbidden APIs' own names: the reference, an answer
    using an allowed builtin through torch._VF, and a method of the answer's own with a forbidden
    name reached through ``self`` are left to run."""
    from judge.static_checks import static_verdict

    exercise = Catalog().get("sgd-momentum")
    root = Path(__file__).resolve().parents[1]
    reference = (root / "solutions" / "sgd-momentum" / "reference.py").read_text()
    assert static_verdict(exercise, reference, "reference.py") is None
    assert static_verdict(exercise, "import torch\nx = torch._VF.add\n", "a.py") is None
    own = ("class SGD:\n    def _single_tensor_sgd(self):\n        return 0\n"
           "    def step(self):\n        return self._single_tensor_sgd()\n")
    assert static_verdict(exercise, own, "b.py") is None
