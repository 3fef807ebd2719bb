# expect: failed
# Locks parts of its own run folder (chmod 0 on a subfolder) so that a plain rmtree cannot remove
# it: the folder, and whatever it holds, must still be gone after the run. Then answers wrongly.
import os


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    try:
        os.makedirs("a/b/c", exist_ok=True)
        with open("a/b/c/f", "w") as handle:
            handle.write("x" * 1000)
        os.chmod("a/b", 0)
        os.chmod("a", 0o500)
    except OSError:
        pass
    return 0.0
