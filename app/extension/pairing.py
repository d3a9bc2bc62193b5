"""The pairing token: what our extension shows to prove it is the one the person set up.

``pinchtab extension pair`` prints it (creating it on first use); it lives in the state dir, 0600.
The extension sends it as ``Authorization: Bearer <token>`` on HTTP and in the ``hello`` frame of
the relay; both sides compare in constant time.
"""
from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

FILE_NAME = "extension-pairing"


def token_path(state_dir: Path) -> Path:
    """Where the token lives in ``state_dir``."""
    return Path(state_dir) / FILE_NAME


def load_or_create(state_dir: Path) -> str:
    """The pairing token, created (0600, in a 0700 folder if new) when there is none yet.

    Raises OSError when the state dir cannot be written.
    """
    path = token_path(state_dir)
    try:
        token = path.read_text(encoding="utf-8").strip()
        if token:
            return token
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    # O_EXCL: two processes pairing at once must not hand out two tokens; the loser reads the winner's.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token


def matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` is the pairing token (constant time; an empty expectation matches nothing)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())

