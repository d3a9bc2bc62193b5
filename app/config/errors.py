"""The one error configuration loading raises."""
from __future__ import annotations


class ConfigError(Exception):
    """A configuration problem, pointing at where it came from.

    ``key`` is the dotted config key (``server.port``), the environment
    variable that supplied the bad value (``PINCHTAB_PORT``), or the path of a
    config file that could not be read or parsed. ``reason`` says what is
    wrong. ``str(error)`` is ``"<key>: <reason>"``.
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"

    def __reduce__(self) -> tuple[type[ConfigError], tuple[str, str]]:
        # The default reduce would call ConfigError(message) and fail; keep the
        # error picklable so it survives a trip through multiprocessing.
        return (type(self), (self.key, self.reason))
