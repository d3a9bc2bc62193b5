"""A WSGI answer with one more thing to do when the server closes it, that is once it is sent."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator


class Closing:
    """The answer ``body`` as the server sees it, whose ``close`` also calls ``hook``: before the
    body's own close with ``first``, else after it. Each step runs even when the one before raised.
    (werkzeug's ClosingIterator does as much, with more machinery per request.)"""

    __slots__ = ("body", "hook", "first")

    def __init__(self, body: Iterable[bytes], hook: Callable[[], None], *, first: bool = False) -> None:
        self.body = body
        self.hook = hook
        self.first = first

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def close(self) -> None:
        if self.first:
            try:
                self.hook()
            finally:
                self._close_body()
        else:
            try:
                self._close_body()
            finally:
                self.hook()

    def _close_body(self) -> None:
        close = getattr(self.body, "close", None)
        if close is not None:
            close()
