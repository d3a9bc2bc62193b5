"""The extension daemon's errors, one small class per condition."""
from __future__ import annotations


class ExtensionError(Exception):
    """Base of the extension daemon's errors."""


class BadCommand(ExtensionError):
    """A command line or submission that cannot be queued (no type, a bad or duplicate requestId)."""


class DaemonClosed(ExtensionError):
    """The daemon is stopping: it takes no more commands."""


class DaemonRunning(ExtensionError):
    """Another daemon already listens on the socket path."""


class NoDaemon(ExtensionError):
    """Nothing listens on the socket path (the CLI's error)."""
