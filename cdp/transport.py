"""What carries CDP messages between the client and the browser: the seam under ``Connection``.

The connection only needs whole text messages in and out, so anything that can carry them can
carry CDP: a websocket to Chrome (``cdp/websocket_transport.py``), or a relay that forwards them
through an extension's ``chrome.debugger`` (extension mode), or an in-memory fake in tests.
"""
from __future__ import annotations

from typing import Protocol


class TransportClosed(Exception):
    """The transport has ended: the browser closed it, or we did."""


class Transport(Protocol):
    """Whole CDP messages to and from the browser, for one reading thread and any sending threads.

    ``receive`` is called only by the connection's reader thread; ``send`` from any thread (the
    transport serialises sends); ``close`` from any thread, and it unblocks a waiting ``receive``.
    """

    def send(self, text: str) -> None:
        """Send one message (a JSON text). Raises TransportClosed or OSError if it cannot."""
        ...

    def receive(self) -> str | bytes | bytearray:
        """Block for the next whole message (JSON, as text or UTF-8 bytes).

        Raises TransportClosed at the end, OSError if the I/O fails.
        """
        ...

    def close(self) -> None:
        """End the transport; a no-op when already ended. Never raises."""
        ...
