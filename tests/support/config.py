"""A test's pinchtab config: the defaults, under the test's own HOME."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def make_config(tmp_path: Path, **overrides: Any) -> Any:
    """``load_config`` with nothing of the machine's: HOME at ``tmp_path`` and no other environment
    variable; ``overrides`` (dotted camelCase keys, as on the command line) on top."""
    from app.config import load_config

    return load_config(env={"HOME": str(tmp_path)}, overrides=overrides)
