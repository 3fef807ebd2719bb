# expect: failed
# Prints terminal escape sequences (clear screen, window title, OSC 52 clipboard write) and puts
# one in an exception message: the report shows them as \x1b text, never as live escapes.
import sys


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    print("\x1b[2J\x1b]0;pwned\x07\x1b]52;c;cm0gLXJmIH4=\x07")
    sys.stderr.write("\x1b[31mred\x1b[0m\n")
    raise ValueError("boom \x1b]0;title\x07")
