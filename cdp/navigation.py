"""Navigating a tab and waiting for it to load, on the tab's worker thread."""
from __future__ import annotations

from typing import Any

from .errors import CDPError, CDPTimeout, DialogBlocking, InvalidURL, NavigationError
from .page import evaluate, main_frame
from .tab import Tab
from .waits import condition, poll

# What "loaded" means for each waitFor value: the main frame's lifecycle event to wait for.
WAIT_EVENTS = {"none": None, "dom": "DOMContentLoaded", "load": "load", "networkidle": "networkIdle"}


def page_info(tab: Tab) -> dict[str, str]:
    """The main frame's URL and title, read from the page (titles change after load)."""
    res = tab.call("Runtime.evaluate", {"expression": "[location.href, document.title]", "returnByValue": True})
    value = (res.get("result") or {}).get("value") or [tab.url, tab.title]
    tab.url, tab.title = value[0], value[1]
    return {"url": value[0], "title": value[1]}


def navigate(tab: Tab, url: str, *, timeout_s: float, wait_for: str = "dom", wait_selector: str = "") -> dict[str, str]:
    """Load ``url`` in the tab and wait until ``wait_for``; returns the final url and title."""
    first = not tab.navigated
    try:
        res = tab.call("Page.navigate", {"url": url}, timeout_s=timeout_s)
    except CDPError as exc:
        if "invalid url" in exc.cdp_message.lower():
            raise InvalidURL(f"invalid URL {url!r}: the browser refuses it ({exc.cdp_message})") from None
        raise
    if res.get("errorText") == "net::ERR_INVALID_URL":
        raise InvalidURL(f"invalid URL {url!r}: the browser refuses it ({res['errorText']})")
    if res.get("errorText"):
        raise NavigationError(f"navigate to {url}: {res['errorText']}")
    tab.navigated = True
    loader = res.get("loaderId")
    if loader:  # a new document (same-document navigations have no loader)
        wait_loaded(tab, res.get("frameId") or tab.main_frame_id, loader, wait_for, timeout_s)
    if first:
        # Chrome keeps the blank page we opened the tab with in history; a fresh tab's first page
        # should be where "back" stops, the way location.replace leaves no history entry.
        try:
            tab.call("Page.resetNavigationHistory")
        except CDPError:
            pass  # the page is mid-swap (a process change); history then keeps about:blank
    if wait_for == "selector" and wait_selector:
        wait_selector_present(tab, wait_selector, timeout_s)
    return page_info(tab)


def wait_loaded(tab: Tab, frame_id: str | None, loader: str | None, wait_for: str, timeout_s: float) -> None:
    """Wait for the frame's document ``loader`` to reach the lifecycle event of ``wait_for``."""
    event = WAIT_EVENTS.get(wait_for, "DOMContentLoaded")
    if event is None or frame_id is None:
        return

    def reached() -> bool:
        fr = tab.frames.get(frame_id)
        return (fr is not None and (loader is None or fr.loader_id == fr.successor(loader))
                and event in fr.lifecycle)

    # A dialog the page opens while loading (an inline alert) stops it loading: say so at once.
    if not tab.wait_for(reached, timeout_s, interrupt=lambda: tab.dialog is not None):
        if tab.dialog is not None:
            raise DialogBlocking(tab.dialog.type, tab.dialog.message)
        raise CDPTimeout(f"page did not reach {wait_for!r} within {timeout_s:.0f} s")


def wait_opened_page(tab: Tab, timeout_s: float) -> None:
    """Wait, up to ``timeout_s``, for a tab a page just opened (a popup) to parse the document it
    was opened to, if one is loading.

    Such a tab is handed over on its initial empty document while the real one loads: a snapshot
    taken at once would read about:blank, or an empty body at the commit, and its refs would be
    retired a moment later. A page that never commits one (a download) costs the wait once.
    """
    if not tab.started_loader or tab.main_frame_id is None:
        return
    try:
        wait_loaded(tab, tab.main_frame_id, tab.started_loader, "dom", timeout_s)
    except (CDPTimeout, DialogBlocking):
        pass  # still loading, or stopped by a dialog: the caller sees the page as it is


def wait_selector_present(tab: Tab, selector: str, timeout_s: float) -> None:
    if not poll(tab, condition(tab, "selector", selector), timeout_s):
        raise CDPTimeout(f"selector {selector!r} did not appear within {timeout_s:.0f} s")


def history_step(tab: Tab, delta: int, timeout_s: float) -> dict[str, Any]:
    """Go ``delta`` entries back (-1) or forward (+1); at either end nothing happens."""
    hist = tab.call("Page.getNavigationHistory")
    index = hist["currentIndex"] + delta
    entries = hist["entries"]
    if 0 <= index < len(entries):
        seq = tab.nav_seq
        tab.call("Page.navigateToHistoryEntry", {"entryId": entries[index]["id"]})
        _wait_moved(tab, seq, timeout_s)
    return page_info(tab)


def reload(tab: Tab, timeout_s: float) -> dict[str, Any]:
    seq = tab.nav_seq
    tab.call("Page.reload", {})
    _wait_moved(tab, seq, timeout_s)
    return page_info(tab)


def _wait_moved(tab: Tab, seq: int, timeout_s: float) -> None:
    """Wait for the main frame to commit (any navigation), then for its document to be parsed.

    A back-forward-cache restore fires no lifecycle events, so readiness is read from the page.
    """
    if not tab.wait_for(lambda: tab.nav_seq != seq, min(timeout_s, 10.0)):
        raise CDPTimeout("the page did not move within 10 s")
    expr = "document.readyState"

    def parsed() -> bool:
        try:
            res = tab.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        except CDPError:
            return False  # the context was replaced under us; ask again
        return (res.get("result") or {}).get("value") in ("interactive", "complete")

    poll(tab, parsed, min(timeout_s, 5.0))


def wait_title(tab: Tab, timeout_s: float) -> bool:
    """Best effort: wait up to ``timeout_s`` for a real title (not empty, not about:blank)."""
    def titled() -> bool:
        try:
            res = tab.call("Runtime.evaluate", {"expression": "document.title", "returnByValue": True})
        except CDPError:
            return False  # the context was replaced under us; ask again
        title = (res.get("result") or {}).get("value")
        return isinstance(title, str) and title.strip() not in ("", "about:blank")

    return poll(tab, titled, timeout_s, interval_s=0.2)


# Consent platforms' own accept buttons first; then a button whose label says yes, but only inside an
# element whose id, class or label names cookies or consent: a page's other "OK" buttons are not ours.
_DISMISS_BANNERS = r"""(() => {
  const known = ['#onetrust-accept-btn-handler', '#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll',
    '#CybotCookiebotDialogBodyButtonAccept', '#didomi-notice-agree-button', '.fc-cta-consent',
    '[data-testid="uc-accept-all-button"]', '#truste-consent-button', '.cc-allow', '.cc-dismiss', '#L2AGLb'];
  const consent = /cookie|consent|gdpr|privacy|cmp|onetrust|cookiebot|didomi|usercentrics|truste/i;
  const yes = new RegExp('^(accept|accept all|accept all cookies|accept cookies|allow|allow all|allow all cookies|' +
    'allow cookies|agree|i agree|agree and close|got it|ok|okay|i understand|understood|yes, i agree)$', 'i');
  const visible = (el) => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
  };
  for (const sel of known) {
    const el = document.querySelector(sel);
    if (el && visible(el)) { el.click(); return sel; }
  }
  const inBanner = (el) => {
    for (let n = el; n && n !== document.body; n = n.parentElement) {
      const names = [n.id, typeof n.className === 'string' ? n.className : '', n.getAttribute('aria-label') || ''];
      if (consent.test(names.join(' '))) return true;
    }
    return false;
  };
  for (const el of document.querySelectorAll('button, [role=button], a, input[type=button], input[type=submit]')) {
    const label = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ');
    if (label.length > 40 || !yes.test(label) || !visible(el) || !inBanner(el)) continue;
    el.click();
    return label;
  }
  return '';
})()"""


def dismiss_banners(tab: Tab) -> str:
    """Best effort: click a cookie/consent banner's accept button; what was clicked ('' if nothing)."""
    try:
        clicked = evaluate(tab, main_frame(tab), _DISMISS_BANNERS, timeout_s=min(tab.remaining(), 2.0))
    except (CDPError, CDPTimeout, NavigationError):
        return ""  # a page mid-swap or a busy one keeps its banner: never worth failing the navigation
    return clicked if isinstance(clicked, str) else ""
