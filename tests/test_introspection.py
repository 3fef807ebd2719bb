"""The marking modes' static check for code that reaches into the judge (judge/introspection.py).

Frame walking inside the learner's process can switch the forbidden-API guards off and rewrite
what the checks observe there; for marks, grind reads the source in its own process first and
refuses the doors. Proven here: each door is found, with its line; ordinary answers (every
corpus answer and golden file that is not itself an attack) are not refused; and `grind grade`'s
path (``marked=True``) refuses a frame-walking answer that plain practice grades as usual.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.catalog import Catalog
from judge.introspection import reaches_into_judge, refusal
from judge.models import Status

from .conftest import ROOT


@pytest.mark.parametrize("source, door", [
    ("import sys\nf = sys._getframe(1)\n", "._getframe"),
    ("import gc\n", "import gc"),
    ("from ctypes import pythonapi\n", "from ctypes import pythonapi"),
    ("def f(g):\n    return g.__closure__\n", ".__closure__"),
    ("def f(frame):\n    return frame.f_back.f_locals\n", ".f_back"),
    ("exec('x = 1')\n", "exec"),
    ("import torch\nk = torch._C._dispatch_get_computed_kernel_for_dispatch_key('aten::empty', torch._C.DispatchKey.CPU)\n",
     ".DispatchKey"),
    ("import torch\ntorch.ops.aten._to_copy.default.redispatch(ks, x)\n", ".redispatch"),
    ("from torch.library import Library\n", "from torch.library import Library"),
    ("m = __import__('s' + 'ys')\n", "__import__"),
    ("run = exec\n", "exec"),
    ("import sys\nsys.modules['gc']\n", ".modules"),
    ("from operator import attrgetter\n", "from operator import attrgetter"),
    ("import traceback\n", "import traceback"),
    ("f = (lambda: 0).__class__\n", ".__class__"),
    ("name = '_get' 'frame'\n", "the text '_getframe'"),
    ("import sys\nf = getattr(sys, '_get' + 'frame')\n", "getattr() with that name"),
    ("import sys as s\nn = 'x'\nf = getattr(s, n)\n", "getattr() with that name"),
    ("import torch\nf = getattr(torch, 'bfloat' + '16')\n", "getattr() with that name"),
    ("import inspect\n", "import inspect"),
    ("from sys import _getframe\n", "from sys import _getframe"),
    # monkeypatching a module by plain assignment: no frame walk, but the checks' own calls change
    ("import torch\ntorch.load = lambda *a, **k: {}\n", "changing torch.load"),
    ("import torch\ndel torch.save\n", "changing torch.save"),
    ("from torch import serialization\nserialization._load = print\n", "changing serialization._load"),
    ("import torch\ns = torch.serialization\nt = s\nt._is_zipfile = bool\n", "changing t._is_zipfile"),
    ("import torch\ndef patch(ns):\n    ns.load = print\npatch(torch)\n", "the module torch used as a value"),
    ("import torch\nholder = [torch]\n", "the module torch used as a value"),
    ("import torch\nobj.ns = torch.serialization\n", "the module torch.serialization used as a value"),
    # a third red team's routes: a submodule passed on, bound by for/with/walrus/match, a class
    # reached by type(x), a module kept in a class, the dunder setter, sys reached another way
    ("import torch\ndef patch(m):\n    m._load = print\npatch(torch.serialization)\n",
     "the module torch.serialization used as a value"),
    ("from torch import serialization as s\nfor m in [s]:\n    m._load = print\n", "the module s used as a value"),
    ("import torch\n(m := torch.serialization)._load = print\n", "the module torch.serialization used as a value"),
    ("import torch\nmatch torch.serialization:\n    case m:\n        m._load = print\n",
     "the module torch.serialization used as a value"),
    ("def g(model):\n    type(model).state_dict = print\n", "changing type(model).state_dict"),
    ("import torch\nclass K:\n    s = torch.serialization\n", "the module torch.serialization kept in a class"),
    ("from torch.nn import Module\nModule.state_dict = print\n", "changing Module.state_dict"),
    ("import torch\ntorch.__setattr__('load', print)\n", ".__setattr__"),
    ("from sys import modules\n", "from sys import modules"),
    ("import sys as s\nm = s.modules\n", ".modules"),
    ("import os\nm = os.sys.modules\n", ".modules"),
    ("import mmap\n", "import mmap"),
    ("import torch\nt = torch.from_file('x', shared=True, size=4)\n", ".from_file"),
    ("import torch\ntorch.nn.Module.state_dict += 1\n", "changing torch.nn.Module.state_dict"),
    ("import grind_checks\n", "import grind_checks"),
])
def test_each_door_is_found_with_its_line(source: str, door: str) -> None:
    found = reaches_into_judge(source, dynamic=False)
    assert door in [what for what, _ in found], found
    message, line = refusal(source, False)
    assert door in message and line == found[0][1]


def test_computed_names_are_doors_only_where_the_exercise_forbids_apis() -> None:
    source = "import torch\ndef f(model, names):\n    return [getattr(model, n) for n in names]\n"
    assert reaches_into_judge(source, dynamic=False) == []
    assert reaches_into_judge(source, dynamic=True) == [("getattr() with that name", 3)]
    assert reaches_into_judge("import pickle\n", dynamic=False) == []
    assert reaches_into_judge("for m in model.modules():\n    pass\n", dynamic=True) == []
    assert reaches_into_judge("x = getattr(obj, 'weight')\n", dynamic=True) == []


def test_an_objects_attributes_stay_free_to_change() -> None:
    """The monkeypatch rule is about modules: ML code sets attributes of its own objects."""
    assert reaches_into_judge("from torch import nn\nT = (nn.modules.batchnorm._NormBase, getattr(nn, 'LayerNorm'))\n"
                              "import torch.nn.functional as F\nG = torch.nn.functional\ny = G.relu(F.relu(x))\n",
                              dynamic=False) == []
    source = ("import os\nimport torch\nimport numpy as np\n"
              "def f(model, p, xs):\n    p.grad = None\n    model.weight = torch.nn.Parameter(torch.zeros(2))\n"
              "    os.environ['RANK'] = '0'\n    dtype = torch.float32\n    x = np.pi\n"
              "    return torch.stack([torch.tensor(x) for x in xs]).to(dtype)\n")
    assert reaches_into_judge(source, dynamic=True) == []


def _answers() -> list[tuple[str, Path]]:
    found = []
    for exercise in Catalog().all():
        for folder in (ROOT / "tests" / "corpus" / exercise.slug, ROOT / "tests" / "submissions" / exercise.slug):
            for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
                found.append((exercise.slug, path))
    return found


def test_no_ordinary_answer_is_refused_for_marks() -> None:
    """Every corpus answer (written in other styles, as learners write) and every golden file
    that passes, unless its header calls it hostile or expects 'forbidden', compiles to no door."""
    refused = []
    catalog = Catalog()
    for slug, path in _answers():
        text = path.read_text(encoding="utf-8", errors="replace")
        head = text.split("\n", 2)[:2]
        if "forbidden" in head[0] or any("hostile" in line for line in head):
            continue
        if path.parent.parent.name == "submissions" and "passed" not in head[0]:
            continue  # a golden wrong answer may dodge the static scan on purpose (bf16's dtype by name)
        try:
            compile(text, str(path), "exec")
        except (SyntaxError, ValueError):
            continue
        exercise = catalog.get(slug)
        if refusal(text, exercise.scanned_strictly, tuple(exercise.forbidden), tuple(exercise.entry)):
            refused.append(path.relative_to(ROOT))
    assert not refused, refused
    assert len(_answers()) > 100  # the corpus was really read


def test_grading_for_marks_refuses_a_frame_walk_that_practice_grades() -> None:
    from judge.grade import grade, static_verdict

    exercise = Catalog().get("clipping")
    path = ROOT / "tests" / "adversarial" / "witness" / "forge_allreduce_count.py"
    source = "import sys\n\n\ndef clip_grad_norm(parameters, max_norm, norm_type=2.0):\n" \
             "    return sys._getframe(1)\n"
    marked = grade(exercise, path, source=source, marked=True)
    assert marked.status is Status.FORBIDDEN and "._getframe at line 5" in marked.message
    assert marked.learner_line == 5
    assert static_verdict(exercise, source, str(path)) is None  # practice runs it (and the guards watch)


SCAN_BYPASSES = sorted((ROOT / "tests" / "adversarial" / "scan").glob("*.py"))


@pytest.mark.parametrize("path", SCAN_BYPASSES, ids=[p.stem for p in SCAN_BYPASSES])
def test_a_red_teams_route_past_the_scan_is_refused_for_marks(path: Path) -> None:
    """A fourth red-team review reached sys.modules through an alias or another module's `sys`,
    attributes by name through string.Formatter, ctypes through numpy, frames through signal
    handlers, and wrote files past write(2) through numpy's memmap: each is refused now, even
    where no API is forbidden (rank0-checkpoint's case)."""
    assert refusal(path.read_text(encoding="utf-8"), False) is not None


def test_a_literal_setting_and_prose_are_not_doors_but_gateways_in_prose_are() -> None:
    """A fifth review found ``torch.backends.cudnn.deterministic = True`` and an assert message
    saying "compile ... eval" refused for marks. A literal holds no code, and a word in prose
    becomes a builtin only through a gateway (builtins, importlib), which stays refused."""
    assert reaches_into_judge("import torch\ntorch.backends.cudnn.deterministic = True\n", True) == []
    assert reaches_into_judge("assert x, 'set it at compile time, not in eval mode'\n", True) == []
    assert reaches_into_judge("import torch\ntorch.backends.cudnn.deterministic = flag\n", True) != []
    assert reaches_into_judge("w = 'take builtins then eval'.split()\n", True) != []
    assert reaches_into_judge("from unittest import mock\n", False) != []


_BF16 = ("torch.bfloat16", "torch.float16", "torch.half", "torch.Tensor.bfloat16", "torch.Tensor.half",
         "torch.frombuffer", "torch.asarray")


@pytest.mark.parametrize("line", [
    "a = x.numpy().astype('e')", "a = np.zeros(3, dtype='<f2')", "a = np.dtype('2e,i4')", "a = np.float16",
    "a = np.half", "a = x.astype('float16')", "a = np.sctypeDict['e']", "a = np.frombuffer(b, 'f2')",
    "a = torch.frombuffer(b, dtype=d)", "a = torch.asarray(b, dtype=d)",
    "a = struct.pack('<5e', *v)", "a = struct.pack('<%de' % n, *v)", "a = struct.pack('=2he', 1, 2, 3.)",
    "torch.library.impl('aten::_to_copy', 'CPU')(f)", "import torch.library as L", "from torch import library",
    "from torch.library import impl",
    "torch.backends.mkldnn.matmul.fp32_precision = 'bf16'", "torch.set_float32_matmul_precision('medium')",
])
def test_numpys_float16_spellings_and_the_routes_past_the_dispatcher_are_refused_for_bf16_marks(line: str) -> None:
    """numpy rounds to float16 outside torch, and frombuffer/asarray make a tensor past its
    dispatcher: neither can the marks poison see (judge/worker/poison.py), so the scan refuses them
    as text on an exercise that forbids a 16-bit float dtype."""
    assert refusal(f"import numpy as np\nimport torch\n{line}\n", True, _BF16, ("to_float16_bits",)) is not None


def test_an_e_format_or_another_exercises_text_is_not_taken_for_numpys_float16() -> None:
    source = "x = 1.5\ns = f'{x:e} {x:.3e}'\n\"\"\"e\"\"\"\nw = ['feed', 'none', '<I', 'use']\nt = 'f2'\n"
    assert refusal(source, True, _BF16, ()) is not None  # 't' spells it
    assert refusal(source.replace("t = 'f2'\n", ""), True, _BF16, ()) is None
    assert refusal(source, True, ("torch.optim.Adam",), ()) is None
