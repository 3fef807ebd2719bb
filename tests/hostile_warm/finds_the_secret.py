# Hostile (written for grind's own tests): the second of two jobs on one warm worker. A fork is a
# copy of the warm server's memory, freed memory included; this file scans its own process
# (/proc/self/mem) for the previous job's printed secret ("GRINDLEAK:" and 32 hex digits) and
# prints every one it finds, so the test can see whether a classmate's prints were reachable.
import re

PATTERN = re.compile(rb"GRINDLEAK:([0-9a-f]{32})")  # this text is not itself a match
found = set()
try:
    maps = open("/proc/self/maps").read().splitlines()
    mem = open("/proc/self/mem", "rb", buffering=0)
except OSError as exc:
    maps, mem = [], None
    print("cannot scan:", exc)
scanned = 0
for line in maps:
    parts = line.split()
    if len(parts) < 2 or not parts[1].startswith("r"):
        continue
    start, end = (int(x, 16) for x in parts[0].split("-"))
    if end - start > 1 << 28:
        continue
    try:
        mem.seek(start)
        data = mem.read(end - start)
    except (OSError, ValueError, OverflowError):
        continue
    scanned += len(data)
    found.update(m.group(1).decode() for m in PATTERN.finditer(data))
    del data
print(f"scanned {scanned >> 20} MB")
for value in sorted(found):
    print("found", value[::-1])  # reversed: the finding itself must not print the secret again


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    return 0.0
