"""Marks: a forbidden implementation is absent from the learner's process, and the verdict that
says so is read from outside it (judge/worker/poison.py).

The guards decide "forbidden" from state in the learner's interpreter. A sixth red-team review
called the forbidden implementation from a finalizer, after the entry returned and with no learner
frame on the stack, and passed in practice and (before the scan refused the names) in marks. In
a marked run the implementation itself is replaced before the learner's file loads: calling it
writes a line on stderr and ends the process with a status that names the API, and grind's own
process turns that into the verdict.

These tests grade through ``run_learner`` (no scan), so that the poison is the only layer in the
way: the scan, which refuses these files for marks before they run, is tested elsewhere.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.pipeline import run_learner, verdict_from_outcome
from judge.trusted import reference_for
from judge.models import Status
from judge.worker import poison

from .conftest import exercise_worker

ROOT = Path(__file__).resolve().parents[1]
RED6 = ROOT / "tests" / "adversarial" / "redteam6"
POISON = ROOT / "tests" / "adversarial" / "poison"

DEFERRED = [
    ("clipping", RED6 / "clip_finalizer_deferred_forbidden.py", "torch.nn.utils.clip_grad_norm_"),
    ("adam", RED6 / "adam_step_return_finalizer.py", "torch.optim.Adam"),
    ("rmsprop", RED6 / "rmsprop_step_return_finalizer.py", "torch.optim.RMSprop"),
]


def _marked(slug: str, path: Path, source: str | None = None, warm: bool = True) -> tuple[object, object]:
    exercise = Catalog().get(slug)
    worker = exercise_worker(slug) if warm else None
    text = path.read_text(encoding="utf-8") if source is None else source
    outcome = run_learner(exercise, text, str(path), worker=worker, marked=True)
    verdict = verdict_from_outcome(exercise, reference_for(exercise, worker=worker), outcome, str(path), worker, text)
    return outcome, verdict


@pytest.mark.parametrize(("slug", "path", "api"), DEFERRED, ids=[d[0] for d in DEFERRED])
def test_a_forbidden_call_deferred_to_a_finalizer_ends_a_marked_run_naming_the_api(slug: str, path: Path,
                                                                                  api: str) -> None:
    """Redteam6's bypasses of the guards: for marks the implementation they call is not there."""
    outcome, verdict = _marked(slug, path)
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert f"Forbidden API: {api}." in verdict.message
    assert "its implementation is absent" in verdict.message
    assert outcome.returncode == poison.STATUS_BASE + list(Catalog().get(slug).forbidden).index(api)


def test_the_poison_holds_in_a_cold_run_too() -> None:
    slug, path, api = DEFERRED[0]
    _, verdict = _marked(slug, path, warm=False)
    assert verdict.status is Status.FORBIDDEN and f"Forbidden API: {api}." in verdict.message, verdict.message


def test_a_rank_that_calls_a_forbidden_implementation_ends_the_marked_run_naming_it() -> None:
    """In a distributed exercise the call happens in a rank; the runner passes its status on."""
    _, verdict = _marked("sharded-clip", POISON / "sharded_clip_rank_finalizer.py")
    assert verdict.status is Status.FORBIDDEN, (verdict.status, verdict.message)
    assert "Forbidden API: torch.nn.utils.clip_grad_norm_." in verdict.message


def test_a_learners_own_exit_with_the_poisons_status_is_not_taken_for_a_forbidden_call() -> None:
    """The status alone names nothing: the poison's own line on stderr must be there too."""
    source = textwrap.dedent("""
        import os
        def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
            os._exit(96)
    """)
    _, verdict = _marked("clipping", POISON / "exit_96.py", source=source)
    assert verdict.status is Status.CRASHED, (verdict.status, verdict.message)
    assert "Forbidden API" not in verdict.message


def test_a_correct_answer_is_untouched_by_the_poison() -> None:
    for slug in ("clipping", "adam", "lr-schedule"):
        path = ROOT / "solutions" / slug / "reference.py"
        _, verdict = _marked(slug, path)
        assert verdict.status is Status.PASSED, (slug, verdict.message)


def test_status_names_only_inside_its_range() -> None:
    forbidden = ("a.b", "c.d")
    line = f"{poison.MARKER}c.d\n"
    assert poison.status_name(forbidden, poison.STATUS_BASE + 1, "x\n" + line) == "c.d"
    assert poison.status_name(forbidden, poison.STATUS_BASE + 1, "no marker") is None
    assert poison.status_name(forbidden, poison.STATUS_BASE + 2, line) is None  # past the list
    assert poison.status_name(forbidden, poison.STATUS_BASE - 1, line) is None
    assert poison.status_name(forbidden, None, line) is None


_PROBE = textwrap.dedent("""
    import sys, types, torch
    from judge.worker import guards, poison
    forbidden = sys.argv[1].split(",")
    checks = types.SimpleNamespace(**({"held": guards._resolve(sys.argv[3])} if sys.argv[3] else {}))
    left = poison.install(poison.resolve(forbidden, guards), checks, torch, guards)
    print("left=" + ",".join(left), flush=True)
    exec(sys.argv[2])
    print("survived", flush=True)
""")

# (forbidden list, statement, the API whose status ends it, or None when it must survive)
PROBES = [
    ("torch.nn.utils.clip_grad_norm_,torch.nn.utils.get_total_norm",
     "p = torch.nn.Parameter(torch.ones(3)); p.grad = torch.ones(3); torch.nn.utils.clip_grad.clip_grad_norm_([p], 1.)",
     "torch.nn.utils.clip_grad_norm_"),
    ("torch.nn.utils.clip_grad_norm_,torch.nn.utils.get_total_norm",
     "torch.nn.utils.get_total_norm([torch.ones(3)])", "torch.nn.utils.get_total_norm"),
    ("torch.nn.utils.clip_grad_norm_", "torch.linalg.vector_norm(torch.ones(3))", None),
    ("torch.optim.Adam,torch.optim.AdamW",
     "p = torch.nn.Parameter(torch.ones(3)); o = torch.optim.AdamW([p]); p.grad = torch.ones(3); o.step()",
     "torch.optim.AdamW"),
    ("torch.optim.Adam", "p = torch.nn.Parameter(torch.ones(3)); torch.optim.SGD([p], lr=.1).step()", None),
    ("torch._fused_sgd_,torch.ops.aten._fused_sgd_",
     "torch.ops.aten._fused_sgd_([torch.ones(2)], [torch.ones(2)], [], weight_decay=0., momentum=0., lr=.1, "
     "dampening=0., nesterov=False, maximize=False, is_first_step=True)", "torch._fused_sgd_"),
    ("torch.amp.GradScaler,torch._amp_update_scale_",
     "torch._C._VariableFunctions._amp_update_scale_(torch.ones(1), torch.zeros(1, dtype=torch.int32), "
     "torch.zeros(1), 2., .5, 2)", "torch._amp_update_scale_"),
    ("torch.amp.GradScaler", "torch.amp.GradScaler('cpu').scale(torch.ones(1))", "torch.amp.GradScaler"),
    ("torch.amp.GradScaler", "(torch.ones(2).half() * 2).float()", None),
]


@pytest.mark.parametrize(("forbidden", "statement", "api"), PROBES, ids=[f"probe{i}" for i in range(len(PROBES))])
def test_every_route_to_a_poisoned_implementation_ends_the_process(forbidden: str, statement: str,
                                                                 api: str | None) -> None:
    """Any alias, the operator by any of its names, and torch's own callers reach the poison;
    neighbours that are not forbidden keep working."""
    done = subprocess.run([sys.executable, "-c", _PROBE, forbidden, statement, ""], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    if api is None:
        assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-800:]
        return
    assert done.returncode == poison.STATUS_BASE + forbidden.split(",").index(api), done.stderr[-800:]
    assert poison.status_name(forbidden.split(","), done.returncode, done.stderr) == api
    assert "survived" not in done.stdout


def test_an_object_the_checks_use_keeps_its_implementation_and_is_said_to() -> None:
    """lr-schedule's checks drive the learner's lambda with LambdaLR: it stays, guarded only."""
    forbidden = "torch.optim.lr_scheduler.LambdaLR,torch.optim.lr_scheduler.StepLR"
    statement = ("p = torch.nn.Parameter(torch.ones(1)); o = torch.optim.SGD([p], lr=1.); "
                 "torch.optim.lr_scheduler.LambdaLR(o, lambda s: 1.).step()")
    done = subprocess.run([sys.executable, "-c", _PROBE, forbidden, statement, "torch.optim.lr_scheduler.LambdaLR"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and "survived" in done.stdout, done.stderr[-800:]
    assert "left=torch.optim.lr_scheduler.LambdaLR" in done.stdout


RED8 = ROOT / "tests" / "adversarial" / "redteam8"
_SLUGS = {"adam": "adam", "clip": "clipping", "loss_scaling": "loss-scaling", "lr_schedule": "lr-schedule",
          "rmsprop": "rmsprop", "sgd": "sgd-momentum", "sampler": "distributed-sampler",
          "sharded_clip": "sharded-clip"}


def _slug(path: Path) -> str:
    return next(_SLUGS[prefix] for prefix in sorted(_SLUGS, key=len, reverse=True) if path.stem.startswith(prefix))


RED8_ATTACKS = sorted(p for p in RED8.glob("*.py") if p.stem != "levels" and "_fp_" not in p.stem)
RED8_CORRECT = sorted(RED8.glob("*_fp_*.py"))


@pytest.mark.parametrize("path", RED8_ATTACKS, ids=[p.stem for p in RED8_ATTACKS])
def test_an_eighth_review_attack_passes_neither_the_poison_alone_nor_marks(path: Path) -> None:
    """Torch's own forbidden code reached another way (a fresh copy compiled from its source, the
    poison's kernels unregistered, the stand-ins' real methods): never a pass for marks, with the
    scan and without it."""
    from judge.submit import grade

    slug = _slug(path)
    _, alone = _marked(slug, path)
    assert alone.status is not Status.PASSED, alone.message
    full = grade(Catalog().get(slug), path, worker=exercise_worker(slug), marked=True)
    assert full.status is not Status.PASSED, full.message


@pytest.mark.parametrize("path", RED8_CORRECT, ids=[p.stem for p in RED8_CORRECT])
def test_an_honest_answer_near_a_forbidden_api_still_passes_for_marks(path: Path) -> None:
    from judge.submit import grade

    slug = _slug(path)
    verdict = grade(Catalog().get(slug), path, worker=exercise_worker(slug), marked=True)
    assert verdict.status is Status.PASSED, verdict.message


# bf16-rounding forbids the 16-bit float dtypes: for marks no tensor of one can exist in the
# learner's process (poison.py's dtype kernels), whatever route makes it.
HALF_FORBIDDEN = "torch.bfloat16,torch.float16,torch.half,torch.Tensor.bfloat16,torch.Tensor.half,torch.frombuffer,torch.asarray"
# (attack file, the dtype the poison names; None: refused by the marks scan, the poison cannot see it)
HALF_ATTACKS = [
    ("bf16_legacy_type_string.py", "torch.float16"),
    ("bf16_thread_outside_watch.py", "torch.float16"),
    ("bf16_autocast_and_complex32.py", "torch.float16"),
    ("bf16_default_dtype_and_reduction.py", "torch.float16"),
    ("bf16_fbgemm_fp16_gemm.py", "torch.float16"),
    ("bf16_frombuffer_alias.py", None),
    ("bf16_struct_half_format.py", None),
    ("bf16_numpy_float16_text.py", None),
    # past torch (issue 28's last routes): CPython's and numpy's encoders, torch's NNC interpreter
    ("../review28/bf16_struct_format_built_at_run_time.py", "torch.float16"),
    ("../review28/bf16_numpy_min_scalar_type.py", None),  # numpy's float16 is float32's twin: wrong, not forbidden
    ("../review28/bf16_nnc_interpreter_both.py", "torch.float16"),
    # torch.frombuffer / torch.asarray from TorchScript's table of builtins, called from C
    # (functools.partial: no profile event) with every __torch_function__ mode off
    ("bf16_frombuffer_jit_builtin_ops.py", "torch.frombuffer"),
    ("bf16_asarray_jit_builtin_ops.py", "torch.asarray"),
]


@pytest.mark.parametrize(("name", "api"), HALF_ATTACKS, ids=[a[0].rsplit("/", 1)[-1][:-3] for a in HALF_ATTACKS])
def test_a_16_bit_float_tensor_ends_a_marked_bf16_run_however_it_is_made(name: str, api: str | None) -> None:
    """Each route to torch's (or numpy's) own rounding: never a pass for marks; where the tensor
    goes through torch's dispatcher the poison alone ends the run naming the dtype. Practice runs
    without the poison (its verdict is the guards' and the checks' own watch)."""
    from judge.submit import grade

    path = POISON / name
    _, alone = _marked("bf16-rounding", path)
    if api is not None:
        assert alone.status is Status.FORBIDDEN and f"Forbidden API: {api}." in alone.message, alone.message
        assert "its implementation is absent" in alone.message
    exercise = Catalog().get("bf16-rounding")
    full = grade(exercise, path, worker=exercise_worker("bf16-rounding"), marked=True)
    assert full.status is not Status.PASSED, full.message
    practice = grade(exercise, path, worker=exercise_worker("bf16-rounding"))
    assert "its implementation is absent" not in practice.message, practice.message


def test_honest_bf16_answers_pass_for_marks_with_the_dtype_poison_on() -> None:
    """The reference, the golden passes and the corpus's correct answers: integer, float64 and
    numpy uint32 arithmetic never meets the poison (nor do the checks' own inputs)."""
    from judge.submit import grade

    exercise = Catalog().get("bf16-rounding")
    honest = [ROOT / "solutions" / "bf16-rounding" / "reference.py",
              *sorted((ROOT / "tests" / "submissions" / "bf16-rounding").glob("passed_*.py")),
              # (correct_python_ints.py, element by element in Python, sits near the time limit on a busy machine)
              *(ROOT / "tests" / "corpus" / "bf16-rounding" / name
                for name in ("correct_division_arithmetic.py", "correct_numpy_uint32.py"))]
    assert len(honest) >= 5
    for path in honest:
        verdict = grade(exercise, path, worker=exercise_worker("bf16-rounding"), marked=True)
        assert verdict.status is Status.PASSED, (path.name, verdict.message)


_HALF_PROBE = textwrap.dedent("""
    import io, os, sys, types, warnings
    import numpy as np, torch
    from judge.worker import guards, poison
    saved = io.BytesIO(); torch.save(torch.ones(2, dtype=torch.float16), saved)
    forbidden = sys.argv[1].split(",") if sys.argv[1] else []
    warnings.simplefilter("ignore")
    poison.install(poison.resolve(forbidden, guards), types.SimpleNamespace(), torch, guards)
    x = torch.randn(8)
    for statement in sys.argv[2:]:
        pid = os.fork()
        if pid == 0:
            sys.stderr = open(os.devnull, "w")
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            exec(statement, {"torch": torch, "np": np, "io": io, "x": x, "SAVED": saved.getvalue()})
            os._exit(0)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
""")

# Each statement makes a 16-bit float tensor through torch's dispatcher (status names the dtype).
HALF_ROUTES = {
    "half": "x.half()", "bfloat16": "x.bfloat16()", "to": "x.to(torch.float16)",
    "to_device_dtype": "x.to('cpu', torch.bfloat16)", "tensor": "torch.tensor([1.], dtype=torch.float16)",
    "tensor_scalar": "torch.tensor(3.0, dtype=torch.float16)", "empty": "torch.empty(3, dtype=torch.bfloat16)",
    "zeros": "torch.zeros(3, dtype=torch.half)", "full": "torch.full((3,), 1.5, dtype=torch.half)",
    "arange": "torch.arange(3, dtype=torch.half)", "linspace": "torch.linspace(0, 1, 3, dtype=torch.half)",
    "rand": "torch.rand(3, dtype=torch.half)", "view_dtype": "x.view(torch.float16)",
    "legacy_ctor": "torch.HalfTensor([1.0])",
    "legacy_bf16_ctor": "torch.BFloat16Tensor(3)", "legacy_storage": "torch.HalfTensor(torch.HalfStorage(3))",
    "type_text": "x.type('torch.HalfTensor')", "type_class": "x.type(torch.BFloat16Tensor)",
    "autocast": "a = torch.ones(4, 4)\nwith torch.autocast('cpu'):\n    torch.mm(a, a)",
    "module_half": "torch.nn.Linear(2, 2).half()", "sum_dtype": "x.sum(dtype=torch.HalfTensor.dtype)",
    "cumsum_dtype": "torch.cumsum(x, 0, dtype=torch.bfloat16)", "softmax_dtype": "torch.softmax(x, 0, dtype=torch.half)",
    "default_dtype": "torch.set_default_dtype(torch.float16)\ntorch.tensor([1.5])",
    "default_dtype_empty": "torch.set_default_dtype(torch.get_autocast_dtype('cpu'))\ntorch.empty(3)",
    "complex32": "torch.zeros(2, dtype=torch.chalf)", "autocast_dtype": "x.to(torch.get_autocast_dtype('cpu'))",
    "new_empty": "x.new_empty(3, dtype=torch.half)", "new_tensor": "x.new_tensor([1.0], dtype=torch.half)",
    "empty_like": "torch.empty_like(x, dtype=torch.half)", "randn_like": "torch.randn_like(x, dtype=torch.half)",
    "sparse": "torch.sparse_coo_tensor([[0]], [1.], dtype=torch.half)", "load": "torch.load(io.BytesIO(SAVED))",
    "storage_half": "torch.UntypedStorage(8).half()", "typed_storage_half": "torch.FloatStorage([1.0]).half()",
    "scalar_tensor": "torch.scalar_tensor(1., dtype=torch.half)",
    "meta_then_cpu": "torch.empty(3, dtype=torch.half, device='meta').to('cpu')",
    "nested": "torch.nested.nested_tensor([x], dtype=torch.half)",
    "as_tensor_buffer": "torch.as_tensor(bytearray(4), dtype=torch.HalfTensor.dtype)",
    "ops_aten": "torch.ops.aten._to_copy.default(x, dtype=torch.float16)",
    # operators that round inside their kernel and return no 16-bit tensor (found by a hostile review)
    "fbgemm_fp16_gemm": "torch.fbgemm_linear_fp16_weight(torch.ones(1, 1), "
                        "torch.fbgemm_pack_gemm_matrix_fp16(x.reshape(-1, 1)), torch.zeros(8))",
    "embedding_4bit_scale": "torch.ops.quantized.embedding_bag_4bit_prepack(x.reshape(-1, 1).repeat(1, 4))",
    "prepack_fp16": "torch.ops.quantized.linear_prepack_fp16(x.reshape(-1, 1))",
    "bf16_quantized": "torch.ops.quantization._FloatToBfloat16Quantized(x)",
    # torch's compilers, which round inside code of their own (NNC's interpreter, the fusers)
    "nnc": "torch._C._te.Dtype.Half", "nnc_import": "import torch._C._te as te\nte.Cast",
    "fuser_switch": "torch._C._jit_override_can_fuse_on_cpu(True)",
    "fuser_context": "with torch.jit.fuser('fuser1'):\n    pass", "onednn_graph": "torch.jit.enable_onednn_fusion(True)",
}
# Each must survive: the poison is on, and these make no 16-bit float tensor.
HALF_NEIGHBOURS = [
    "x.view(torch.int32).to(torch.int64).to(torch.int16).to(torch.float64).to(torch.int32)",
    "str(torch.tensor([float('inf'), float('nan'), 1.5]))", "torch.where(x > 0, x, 1.0) + 2",
    "x.sum(dtype=torch.float64); torch.softmax(x, 0, dtype=torch.float64)",
    "torch.tensor([1, 2], dtype=torch.int16).view(torch.uint8)", "torch.finfo(torch.float16).max",
    "torch.from_numpy(np.zeros(3, np.float32)); x.numpy().view(np.int32)",
    "torch.from_numpy(np.frombuffer(bytearray(4), np.int16))", "torch.full_like(x, 3)",
]


# What makes a 16-bit tensor in C without any operator: the dtype poison cannot see these, so the
# exercise names both (refused for marks by the scan) and the builtins' own C functions are the
# exit stub (poison._poison_builtin).
BEYOND_THE_DISPATCHER = [
    "torch.frombuffer(bytearray(4), dtype=torch.get_autocast_dtype('cpu'))",
    "torch.asarray(bytearray(4), dtype=torch.get_autocast_dtype('cpu'))",
]


@pytest.fixture(scope="module")
def half_probe() -> dict[str, int]:
    statements = list(HALF_ROUTES.values()) + HALF_NEIGHBOURS + BEYOND_THE_DISPATCHER
    done = subprocess.run([sys.executable, "-c", _HALF_PROBE, HALF_FORBIDDEN, *statements], capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    codes = [int(line) for line in done.stdout.split()]
    assert len(codes) == len(statements), done.stderr[-800:]
    return dict(zip(statements, codes))


@pytest.mark.parametrize("route", list(HALF_ROUTES), ids=list(HALF_ROUTES))
def test_every_torch_route_to_a_16_bit_float_ends_the_process_naming_the_dtype(half_probe: dict[str, int],
                                                                               route: str) -> None:
    code = half_probe[HALF_ROUTES[route]]
    assert poison.status_name(HALF_FORBIDDEN.split(","), code, f"{poison.MARKER}torch.float16\n"
                              f"{poison.MARKER}torch.bfloat16\n") in ("torch.float16", "torch.bfloat16"), code


@pytest.mark.parametrize("statement", HALF_NEIGHBOURS, ids=[f"neighbour{i}" for i in range(len(HALF_NEIGHBOURS))])
def test_the_dtype_poison_leaves_other_dtypes_alone(half_probe: dict[str, int], statement: str) -> None:
    assert half_probe[statement] == 0


def test_the_dtype_poison_is_installed_only_where_a_16_bit_dtype_is_forbidden() -> None:
    """Another exercise's marked run (here clipping's list) makes 16-bit tensors freely."""
    done = subprocess.run([sys.executable, "-c", _HALF_PROBE, "torch.nn.utils.clip_grad_norm_", "x.half()",
                           "torch.zeros(2, dtype=torch.bfloat16)"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.stdout.split() == ["0", "0"], done.stderr[-800:]


def test_the_16_bit_dtypes_and_tensor_methods_are_not_left_to_the_guards() -> None:
    done = subprocess.run([sys.executable, "-c", _PROBE, HALF_FORBIDDEN, "", ""], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    left = done.stdout.split("left=", 1)[1].splitlines()[0]
    assert not {"torch.bfloat16", "torch.float16", "torch.Tensor.half", "torch.Tensor.bfloat16"} & set(left.split(","))


@pytest.mark.parametrize("statement", BEYOND_THE_DISPATCHER, ids=[f"beyond{i}" for i in range(2)])
def test_the_builtins_that_make_a_tensor_past_the_dispatcher_are_absent_themselves(
        half_probe: dict[str, int], statement: str) -> None:
    """torch.frombuffer and torch.asarray make a tensor of any dtype over a buffer with no operator
    the dtype poison sees: their own C functions end the run, naming them (a review reached both
    through TorchScript's table of builtins, called from C, and passed before)."""
    api = "torch.frombuffer" if "frombuffer" in statement else "torch.asarray"
    assert half_probe[statement] == poison.STATUS_BASE + HALF_FORBIDDEN.split(",").index(api)


# The IEEE half encoders in C, past torch (poison._poison_half_encoders). Each statement turns the
# float32 array V into float16 bit patterns (a list of ints, ``bits``) through one of them. With the
# poison on, each must end the process naming torch.float16 or give wrong patterns; without it
# (the control: the route is real), each gives the right ones.
ENCODER_ROUTES = {
    "struct": "bits = [struct.unpack('<H', struct.pack('<e', v))[0] for v in V.tolist()]",
    "struct_object": "bits = [struct.Struct('>e').pack(v)[1] | struct.Struct('>e').pack(v)[0] << 8 for v in V.tolist()]",
    "testcapi": "import _testcapi\nbits = [int.from_bytes(_testcapi.float_pack(2, v, 1), 'little') for v in V.tolist()]",
    "min_scalar_type": "bits = V.astype(np.min_scalar_type(1.0)).view(np.uint16).tolist()",
    "astype_text": "bits = V.astype('e').view('u2').tolist()",
    "astype_big_endian": "bits = V.astype('>f2').byteswap().view('u2').tolist()",
    "astype_name": "bits = V.astype(np.dtype('float16')).view(np.uint16).tolist()",
    "typecodes": "bits = V.astype(np.typecodes['Float'][0]).view(np.uint16).tolist()",
    "dtype_class": "bits = V.astype(np.dtypes.Float16DType()).view(np.uint16).tolist()",
    "array_ctor": "bits = np.array(V.tolist(), dtype=np.half).view(np.uint16).tolist()",
    "setitem": "a = np.zeros(len(V), np.float16)\nfor i, v in enumerate(V.tolist()): a[i] = v\nbits = a.view(np.uint16).tolist()",
    "copyto": "a = np.empty(len(V), 'e')\nnp.copyto(a, V)\nbits = a.view(np.uint16).tolist()",
    "ufunc_dtype": "bits = np.add(V, 0, dtype='e').view(np.uint16).tolist()",
    "ufunc_signature": "bits = np.multiply(V, 1, signature='ee->e').view(np.uint16).tolist()",
    "ufunc_out": "a = np.empty(len(V), 'e')\nnp.positive(V, out=a, casting='unsafe')\nbits = a.view(np.uint16).tolist()",
    "scalar": "bits = [int(np.float16(v).view(np.uint16)) for v in V.tolist()]",
    "scalar_float_back": "bits = [np.array(float(np.float16(v))).astype('e').view('u2').item() for v in V.tolist()]",
    "scalar_math": "z = np.frombuffer(bytes(2), 'e')[0]\nbits = [int(np.array(z + v).astype('e').view('u2')) for v in V.tolist()]",
    "scalar_subclass": "class H(np.float16): pass\nbits = [int(H(v).view(np.uint16)) for v in V.tolist()]",
    "frombuffer_times": "one = np.frombuffer(bytes([0, 60] * len(V)), 'e')\nbits = (one * V.astype(object)).astype('e').view('u2').tolist()",
    "fromstring": "bits = np.fromstring(' '.join(map(repr, V.tolist())), dtype='e', sep=' ').view('u2').tolist()",
    "torch_from_numpy": "bits = torch.from_numpy(V.astype('e')).view(torch.int16).tolist()",
}
_ENCODER_PROBE = textwrap.dedent("""
    import os, struct, sys, types, warnings
    import numpy as np, torch
    from judge.worker import guards, poison
    V = np.array([1.00048828125, 1.0009765625 + 2.0 ** -22, 65519.0, 2.0 ** -25, 2.0 ** -24 * 1.5, -3.14159], np.float32)
    RIGHT = V.astype(np.float16).view(np.uint16).tolist()
    warnings.simplefilter("ignore")
    if sys.argv[1] == "poisoned":
        poison.install(poison.resolve(sys.argv[2].split(","), guards), types.SimpleNamespace(), torch, guards)
    for statement in sys.argv[3:]:
        pid = os.fork()
        if pid == 0:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            space = {"np": np, "torch": torch, "struct": struct, "V": V}
            try:
                exec(statement, space)
            except Exception:
                os._exit(3)
            bits = [b & 0xFFFF for b in space["bits"]]
            os._exit(0 if bits == RIGHT else 4)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
""")


def _encoder_probe(mode: str) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-c", _ENCODER_PROBE, mode, HALF_FORBIDDEN, *ENCODER_ROUTES.values()],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    codes = [int(line) for line in done.stdout.split()]
    assert len(codes) == len(ENCODER_ROUTES), done.stderr[-800:]
    return dict(zip(ENCODER_ROUTES, codes))


def test_every_half_encoder_route_gives_the_right_patterns_without_the_poison() -> None:
    """The control: each route really rounds float32 to float16 (0: the right bit patterns)."""
    codes = _encoder_probe("plain")
    assert {route: code for route, code in codes.items() if code != 0} == {}


def test_no_half_encoder_in_c_gives_the_right_patterns_with_the_poison_on() -> None:
    """CPython's encoder ends the process naming torch.float16; numpy's float16 is float32's twin, so
    every numpy route either ends there (the np.float16 scalar) or rounds nothing (4: wrong
    patterns; 3: raised, as a view of 4-byte items as 2-byte ones may)."""
    status = poison.STATUS_BASE + HALF_FORBIDDEN.split(",").index("torch.float16")
    codes = _encoder_probe("poisoned")
    assert {route: code for route, code in codes.items() if code not in (status, 3, 4)} == {}
    assert codes["struct"] == codes["testcapi"] == codes["scalar"] == status


def test_bf16_checks_build_the_same_float16_midpoints_without_a_float16_tensor(kit: object) -> None:
    """The checks run in the poisoned process, so every_midpoint builds float16 values' float32
    patterns from integers; here, unpoisoned, they equal the old formula's (torch's own
    float16 -> float32 widening) bit for bit, for every finite float16 pattern."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("bf16_checks", ROOT / "solutions" / "bf16-rounding" / "checks.py")
    assert spec is not None and spec.loader is not None
    checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checks)
    h = torch.arange(65536, dtype=torch.int64)
    finite = (h & 0x7FFF) < 0x7C00
    widened = h.to(torch.int16).view(torch.float16).float().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    assert torch.equal(checks.float16_as_float32_bits(h[finite]), widened[finite])
    base = widened[finite]
    exponent = (base >> 23) & 0xFF
    half = torch.where(exponent >= 113, torch.full_like(base, 1 << 12),
                       torch.ones_like(base) << (12 + (113 - exponent).clamp(max=11)))
    ties = base + half
    old = checks.from_bits(torch.cat([ties - 1, ties, ties + 1]) & 0xFFFFFFFF)
    new = checks.every_midpoint(checks.FP16)()["x"]
    assert torch.equal(new.view(torch.int32), old.view(torch.int32))


def test_the_encoder_poison_writes_code_on_a_host_that_refuses_writable_code_pages() -> None:
    """Where mprotect refuses write and execute together (W^X), the jump is written through
    /proc/self/mem, which the kernel performs past the page's protection (here on a scratch page)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    page = libc.mmap(None, 4096, 5, 0x22, -1, 0)  # read and execute only, as code is

    class RefusingMprotect:
        def mprotect(self, *args: object) -> int:
            return -1

    try:
        poison._write_memory(RefusingMprotect(), page + 16, b"\x48\xb8jump")
        assert ctypes.string_at(page + 16, 6) == b"\x48\xb8jump"
    finally:
        libc.munmap(page, 4096)
