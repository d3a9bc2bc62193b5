"""Answering the tab's open JavaScript dialog (alert, confirm, prompt, beforeunload), on its worker."""
from __future__ import annotations

from typing import Any

from .errors import CDPError, NoDialog
from .tab import Tab


def answer_dialog(tab: Tab, accept: bool, text: str = "") -> dict[str, Any]:
    """Accept or dismiss the tab's open dialog (``text`` answers a prompt); NoDialog when none."""
    dialog = tab.dialog
    if dialog is None:
        raise NoDialog(f"no dialog open on tab {tab.id}")
    params: dict[str, Any] = {"accept": accept}
    if text:
        params["promptText"] = text
    # The dialog belongs to the session whose page opened it: the tab's own, or an out-of-process
    # iframe's; the tab does not record which, so the others are tried after its own.
    sessions = [tab.session_id] + sorted({f.session_id for f in tab.frames.values()} - {tab.session_id})
    for i, session in enumerate(sessions):
        try:
            tab.call("Page.handleJavaScriptDialog", params, session_id=session)
            break
        except CDPError:
            if i == len(sessions) - 1:
                if tab.dialog is None:  # it closed meanwhile (the page navigated away)
                    raise NoDialog(f"no dialog open on tab {tab.id}") from None
                raise
    dialog.handled = "accepted" if accept else "dismissed"
    # The closing event clears tab.dialog; wait for it so the next request sees an unblocked page.
    tab.wait_for(lambda: tab.dialog is not dialog, 5.0)
    return {"type": dialog.type, "message": dialog.message, "handled": True}
