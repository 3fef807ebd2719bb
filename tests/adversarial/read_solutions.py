# expect: failed|error
# needs: landlock|bubblewrap
# Finds the reference on disk and runs it: hidden by bubblewrap, so it is not there to read.
import importlib.util
from pathlib import Path

import judge

root = Path(judge.__file__).parent
candidates = [root / "_content" / "solutions", root.parent / "solutions"]
source = next(p / "clipping" / "reference.py" for p in candidates if (p / "clipping" / "reference.py").exists())
spec = importlib.util.spec_from_file_location("stolen", source)
stolen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(stolen)
clip_grad_norm_ = stolen.clip_grad_norm_
