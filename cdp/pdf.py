"""The page as a PDF (``Page.printToPDF``), on the tab's worker."""
from __future__ import annotations

import base64
from typing import Any

from .errors import BadPrintOptions, CDPError, PrintFailed
from .tab import Tab

INVALID_PARAMS = -32602  # JSON-RPC: Chrome refuses the parameters themselves


def print_to_pdf(tab: Tab, options: dict[str, Any]) -> bytes:
    """``Page.printToPDF`` with the given options (backgrounds always printed); the PDF bytes.

    Raises BadPrintOptions when Chrome rejects the options, PrintFailed when it cannot print the
    page at all (a caller's retry with other options, or another page, may do; a bare retry will not).
    """
    try:
        res = tab.call("Page.printToPDF", {**options, "printBackground": True})
    except CDPError as exc:
        msg = exc.cdp_message.lower()
        if "page range" in msg:
            raise BadPrintOptions(f"pageRanges: {exc.cdp_message}", "pageRanges") from None
        if "print parameters" in msg or exc.code == INVALID_PARAMS:
            raise BadPrintOptions(exc.cdp_message) from None
        raise PrintFailed(f"the browser could not print the page: {exc.cdp_message}") from None
    return base64.b64decode(res["data"])
