"""Errors raised by the CDP client. The HTTP layer maps each to one status and code."""
from __future__ import annotations


class CDPError(Exception):
    """Chrome answered a command with an error."""

    def __init__(self, method: str, message: str, code: int | None = None) -> None:
        super().__init__(f"{method}: {message}")
        self.method = method
        self.cdp_message = message
        self.code = code


class CDPTimeout(Exception):
    """A command or a wait passed its deadline."""


class Abandoned(CDPTimeout):
    """Nobody waits for a tab's job any more (its caller left or timed out): it was skipped or stopped."""


class InputUnresponsive(CDPTimeout):
    """Input events on a tab go unanswered (an earlier one timed out too): failed fast, not waited out."""


class TargetClosed(Exception):
    """The tab was closed or detached; its pending and future calls fail at once."""


class TargetCrashed(TargetClosed):
    """The tab's renderer crashed."""


class BrowserGone(Exception):
    """The connection to the browser closed (the browser exited or crashed)."""


class LaunchError(Exception):
    """The browser could not be found, started or reached."""


class StaleRef(Exception):
    """A ref names a node that is no longer in the document."""

    def __init__(self, ref: str, role: str = "", name: str = "", candidates: list[dict] | None = None) -> None:
        super().__init__(f"ref {ref} is stale: its element is no longer in the page; take a new /snapshot")
        self.ref = ref
        self.role = role
        self.name = name
        self.candidates = candidates or []


class UnknownRef(Exception):
    """A ref that this tab's current document never issued."""

    def __init__(self, ref: str) -> None:
        super().__init__(f"ref {ref} not found - take a /snapshot first")
        self.ref = ref


class NoSuchElement(Exception):
    """A selector matched nothing."""


class FrameGone(Exception):
    """The frame the tab's selectors were scoped to (POST /frame) is no longer in the page."""


class BadFrameTarget(ValueError):
    """A POST /frame target that names no frame, or more than one."""


class BadSelector(ValueError):
    """A selector that cannot be parsed or that the page rejects (invalid CSS or XPath)."""


class ActionError(Exception):
    """An action could not be carried out (wrong element kind, not focusable, ...)."""


class NotAnElement(ActionError):
    """A target that is no element (the document itself): there is nothing to act on or read."""


class ElementOccluded(ActionError):
    """Something else is on top of the element at its centre: input there would reach that instead."""

    def __init__(self, covered_by: str, *, moved: bool = False) -> None:
        # "element is occluded" is the original's wording, which its scripts look for.
        where = (f"it kept moving as it was clicked, and each click at its centre reached {covered_by} instead "
                 "(those clicks were stopped before the page saw them)" if moved else
                 f"it is covered by {covered_by}, and a click there would reach that instead")
        super().__init__(f'element is occluded: {where} (send "mode": "dom" to click the element through the DOM)')
        self.covered_by = covered_by


class NavigationError(Exception):
    """Chrome could not load the page (DNS, refused connection, bad URL, ...)."""


class InvalidURL(NavigationError):
    """Chrome refuses the URL itself (no retry can load it): the caller's fault, not the network's."""


class DialogBlocking(Exception):
    """A JavaScript dialog is open and blocks the page."""

    def __init__(self, dialog_type: str, message: str) -> None:
        super().__init__(f"a JavaScript {dialog_type} is blocking the page: {message!r}; answer it with POST /dialog")
        self.dialog_type = dialog_type
        self.dialog_message = message


class NavigationChanged(Exception):
    """An action without waitNav made the page load a new document: earlier refs are gone."""

    def __init__(self, url: str, result: dict | None = None) -> None:
        super().__init__("the action navigated the page (its refs are gone); send waitNav: true when a "
                         "navigation is expected, then take a new /snapshot")
        self.url = url
        self.result = result or {}


class NoDialog(Exception):
    """No dialog is open on the tab."""


class BadPrintOptions(ValueError):
    """Chrome rejected the PDF options (page ranges past the end, margins that leave no room)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class PrintFailed(Exception):
    """Chrome could not print the page (its own refusal, not our options' fault nor ours)."""


class BadCursor(ValueError):
    """A snapshot's ``after`` cursor is not a ref of the snapshot."""

    def __init__(self, after: str) -> None:
        super().__init__(f"after={after}: no such ref in this snapshot")
        self.after = after
