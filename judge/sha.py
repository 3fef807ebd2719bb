"""``sha256`` for the modules every ``grind run`` loads, without importing hashlib.

hashlib loads OpenSSL's libcrypto when it is imported (about 2 ms of a daemon-served run, a
fiftieth of it) only to offer constructors the client never needs. CPython builds its own
SHA-256 in (``_sha2`` from 3.12, ``_sha256`` before); the digest is the same bytes. A build
without them (FIPS-only Pythons drop the builtin hashes) gets hashlib's.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256
else:
    for _name in ("_sha2", "_sha256", "hashlib"):  # 3.12+, 3.10-3.11, anything else
        try:
            sha256 = importlib.import_module(_name).sha256
            break
        except (ImportError, AttributeError):
            continue

__all__ = ["sha256"]
