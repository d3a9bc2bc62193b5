"""What the tests share besides fixtures: pages served on 127.0.0.1, pinchtab servers in
subprocesses, the calls an agent makes, bounded waits that fail the test.

``tests/conftest.py`` turns these into fixtures; test modules import them from here by name
(``tests`` is on pytest's ``pythonpath``).
"""
from __future__ import annotations

from pathlib import Path

# The repository: servers started in subprocesses run from here, so they import this checkout.
ROOT = Path(__file__).resolve().parents[2]
