"""Learner text is data: decoding a submission, and escaping what it says before it is shown.

A learner's file and everything that comes back from running it (exception messages, printed
output, file names) are bytes or strings that nobody checked. Two things go wrong with them:

- a file saved with a byte order mark, or in another encoding, must not read as a syntax error
  at a character the learner cannot see: ``read_source`` is the one place grind decodes a
  submission, and it says in one line what is wrong;
- a string holding a lone surrogate (``raise ValueError("\\ud800")``) cannot be encoded, so
  printing or writing it raises in grind, far from where it came in; XML also forbids most
  control characters. ``safe``, ``safe_data`` and ``xml_safe`` escape such text, visibly, just
  before it is rendered or written.

Standard library only: the core, the report and the batch writers all use it.
"""

from __future__ import annotations

import io
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

ENCODING = "utf-8-sig"  # UTF-8, with the byte order mark some Windows editors write skipped


class Source(NamedTuple):
    """A submission's text, and why it cannot be graded (``None`` when it can).

    When ``problem`` is set, ``text`` is still the file decoded with replacement characters, so
    that callers can hash or store what they saw; it is never graded."""

    text: str
    problem: str | None = None


def decode_source(data: bytes, name: str) -> Source:
    """Decode a submission's bytes as Python itself would: by its PEP 263 coding cookie
    (``# -*- coding: latin-1 -*-`` on line 1 or 2) when it has one, else UTF-8 (a leading BOM is
    skipped), via ``tokenize.detect_encoding`` so that grind accepts exactly the files the
    interpreter does. The text is graded as a ``str``, for which compile() ignores the cookie, so
    it is never decoded twice. Bytes that are not text in that encoding, or a cookie naming an
    encoding Python does not know, are named in one line (the first bad byte and its line) rather
    than graded as text that would surface as a puzzling syntax error at U+FFFD."""
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # an unknown encoding in the cookie, or a BOM contradicting it
        return Source(data.decode(ENCODING, errors="replace"),
                      f"{safe(name)}: {exc.msg or exc}; declare a known encoding or save it as UTF-8")
    if encoding == "utf-8":
        encoding = ENCODING  # detect_encoding says utf-8-sig only with a BOM; the BOM is skipped either way
    try:
        return Source(data.decode(encoding))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        shown = "UTF-8" if encoding in (ENCODING, "utf-8") else encoding
        problem = (f"{safe(name)} is not {shown} text (byte 0x{data[exc.start]:02x} at line {line}); "
                   "save it as UTF-8")
        return Source(data.decode(encoding, errors="replace"), problem)


def read_source(path: Path) -> Source:
    """The submission at ``path``, decoded by ``decode_source``. An OSError is left to the caller,
    which knows whether a missing file is a usage error or a student without a submission."""
    return decode_source(Path(path).read_bytes(), Path(path).name)


def safe(text: str, encoding: str = "utf-8") -> str:
    """``text`` with whatever ``encoding`` cannot hold (lone surrogates, for UTF-8) written as a
    backslash escape, so that printing or writing it cannot fail, and the reader sees where."""
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.encode(encoding, "backslashreplace").decode(encoding)
    except LookupError:  # an encoding Python does not know: UTF-8 is the safe assumption
        return safe(text)


def safe_data(value: Any, encoding: str = "utf-8") -> Any:
    """``value`` (JSON-like data) with every string in it, keys included, made ``safe``."""
    if isinstance(value, str):
        return safe(value, encoding)
    if isinstance(value, dict):
        return {safe_data(k, encoding): safe_data(v, encoding) for k, v in value.items()}
    if isinstance(value, list):
        return [safe_data(v, encoding) for v in value]
    if isinstance(value, tuple):
        return tuple(safe_data(v, encoding) for v in value)
    return value


def json_ready(value: Any) -> Any:
    """``value`` with every non-finite float spelled "nan", "inf" or "-inf": JSON has no numbers
    for them, and Python's NaN/Infinity tokens are refused by strict parsers (JavaScript, jq)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if value != value else ("inf" if value > 0 else "-inf")
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(v) for v in value]
    return value


# XML 1.0 allows only tab, newline and carriage return below U+0020, and neither U+FFFE/U+FFFF
# nor surrogates; ElementTree writes them as they are, which leaves a file no parser reads.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str, encoding: str = "utf-8") -> str:
    """``safe`` text with control characters (ESC above all) written as ``\\xNN``: a learner's
    output or exception message must not clear the screen, retitle the window or write the
    clipboard (OSC 52) of whoever reads the verdict. Newlines and tabs stay."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), safe(text, encoding))


def xml_safe(text: str) -> str:
    """``safe`` text that is also allowed in an XML document: forbidden characters become
    ``\\xNN`` (or ``\\uNNNN``) escapes."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), safe(text))


def clock_text(seconds: float | None) -> str:
    """12:34, or 1:02:03 past an hour; an em dash when unknown."""
    if seconds is None:
        return "—"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def until_text(ts: float | None, now: float) -> str:
    """When something comes back: "now", "in 40 min", "in 5 h", "tomorrow", "in 3 days (Fri 17 Jan)"."""
    if ts is None:
        return "—"
    if ts <= now:
        return "now"
    if ts - now < 3600:
        return f"in {max(1, int((ts - now) // 60))} min"
    days = (datetime.fromtimestamp(ts).date() - datetime.fromtimestamp(now).date()).days
    if days == 0:
        return f"in {int((ts - now) // 3600)} h"
    if days == 1:
        return "tomorrow"
    return f"in {days} days ({datetime.fromtimestamp(ts).strftime('%a %d %b')})"


def for_terminal(text: str, stream: Any) -> str:
    """``text`` wrapped at word boundaries to the width of ``stream`` when it is a terminal
    (a terminal breaks a long line wherever the column runs out: "afte" / "r"); unchanged for a
    pipe or a file, where a script reads one line per message. Continuation lines are indented
    two spaces, so a wrapped line reads as one. For lines grind prints itself, not through rich."""
    import shutil
    import textwrap

    try:
        if not stream.isatty():
            return text
    except (AttributeError, ValueError):
        return text
    width = shutil.get_terminal_size().columns
    return "\n".join(textwrap.fill(line, width, subsequent_indent="  " if not line.startswith(" ") else
                                   " " * (len(line) - len(line.lstrip()) + 2), break_long_words=False,
                                   break_on_hyphens=False) if len(line) > width else line
                     for line in text.splitlines())
