"""The one navigation policy (app.policy.navigation) and every path that opens a page through it:
/navigate, /tab, /tabs/{id}/navigate, popups a page opens, each page /scrape and /audit load and
where each of them ended after redirects.

The rule itself is checked without a browser; the paths against real headless Chromium on pages
served on 127.0.0.1. Name resolution is stubbed (netguard.RESOLVER_EXTENSION): nothing here leaves
the machine, and a refused URL never reaches the browser.
"""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from support.config import make_config
from support.waits import wait_until

from app.policy import idpi, netguard
from app.policy.navigation import NavigationPolicy
from app.web.errors import BadRequest, Forbidden

STRICT_LOCAL = {"security.idpi.strictMode": True, "security.allowedDomains": ["localhost"]}
METADATA_NAMES = {"metadata.google.internal": ["169.254.169.254"], "169.254.169.254.nip.io": ["169.254.169.254"],
                  "intranet.test": ["10.1.2.3"], "wiki.corp.test": ["10.1.2.4"], "host.corp2.test": ["10.0.0.7"],
                  "shop.test": ["93.184.216.34"]}


def stub_resolver(host: str) -> list[str]:
    return METADATA_NAMES.get(host, [])


def policy(tmp_path: Any, resolver: netguard.Resolver = stub_resolver, **overrides: Any) -> NavigationPolicy:
    return NavigationPolicy.from_config(make_config(tmp_path, **overrides).security, resolver)


def refusal(p: NavigationPolicy, url: str, **kwargs: Any) -> tuple[int, str, str]:
    """(status, code, message) of the policy's refusal of ``url``; fails the test when it lets it through."""
    try:
        allowed = p.check(url, **kwargs)
    except (BadRequest, Forbidden) as exc:
        return exc.status, exc.code, exc.message
    raise AssertionError(f"{url} was let through as {allowed.url}")


def local(site: Any, path: str) -> str:
    """The test site's page under the name ``localhost`` (the strict lists below name only that)."""
    return site.url(path).replace("127.0.0.1", "localhost")


def redirect(site: Any, to: str) -> str:
    """A URL on the list (localhost) that answers 302 to ``to``."""
    return local(site, "redirect") + "?to=" + to


# --- the rule, without a browser ---------------------------------------------------------------------------
def test_schemes_and_the_errors_they_answer_with(tmp_path: Any) -> None:
    p = policy(tmp_path)
    assert p.check("example.com/a").url == "https://example.com/a"  # typed without a scheme
    assert p.check("about:blank").url == "about:blank"
    assert refusal(p, "javascript:alert(1)")[:2] == (400, "bad_url")
    assert refusal(p, "data:text/html,x")[:2] == (400, "bad_url")
    assert refusal(p, "http://[::1")[:2] == (400, "bad_url")
    assert refusal(p, "file:///etc/passwd")[:2] == (403, "file_scheme_disabled")
    assert policy(tmp_path, **{"security.allowFileScheme": True}).check("file:///etc/passwd").url == "file:///etc/passwd"
    # A page's own commands open web pages only, whatever the config allows.
    web = policy(tmp_path, **{"security.allowFileScheme": True})
    for url in ("file:///etc/passwd", "javascript:alert(1)", "data:text/html,x", "about:blank", "example.com"):
        status, code, message = refusal(web, url, web_only=True)
        assert (status, code) == (400, "bad_url") and "only http and https" in message, message


def test_the_allowlist_refuses_in_strict_mode_and_warns_otherwise(tmp_path: Any) -> None:
    strict = policy(tmp_path, **STRICT_LOCAL)
    status, code, message = refusal(strict, "http://127.0.0.1:8080/")
    assert (status, code) == (403, "idpi_blocked")
    assert message == "navigation blocked by IDPI: domain '127.0.0.1' is not in security.allowedDomains"
    assert strict.check("http://localhost:8080/x").warning is None
    warned = policy(tmp_path, **{"security.allowedDomains": ["localhost"]}).check("http://127.0.0.1:8080/")
    assert warned.url == "http://127.0.0.1:8080/" and warned.warning is not None and warned.warning.threat


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/",
                                 "http://metadata.google.internal/computeMetadata/v1/",
                                 "http://169.254.169.254.nip.io/latest/"])
@pytest.mark.parametrize("listed", [["*"], [], ["metadata.google.internal", "169.254.169.254.nip.io",
                                                "169.254.169.254", "::ffff:169.254.169.254"]])
def test_a_metadata_address_is_refused_by_name_or_number_whatever_the_list(tmp_path: Any, url: str,
                                                                           listed: list[str]) -> None:
    status, code, message = refusal(policy(tmp_path, **{"security.allowedDomains": listed}), url)
    assert (status, code) == (403, "navigation_blocked") and "metadata" in message, message


def test_with_a_list_other_hosts_stay_off_private_addresses_and_the_machine_stays_reachable(tmp_path: Any) -> None:
    listed = policy(tmp_path, **{"security.allowedDomains": ["example.com", "wiki.corp.test", "*.corp2.test"]})
    status, code, message = refusal(listed, "http://intranet.test/admin")
    assert (status, code) == (403, "navigation_blocked") and "intranet.test resolves to 10.1.2.3" in message
    assert refusal(listed, "http://10.9.9.9/")[1] == "navigation_blocked"
    assert listed.check("http://wiki.corp.test/").url == "http://wiki.corp.test/"  # listed: may be intranet
    assert listed.check("http://host.corp2.test/").url == "http://host.corp2.test/"  # so may a wildcard's host
    assert listed.check("http://localhost:9/").url and listed.check("http://127.0.0.1:9/").url
    assert listed.check("http://shop.test/").warning is not None  # public, off the list: a warning only
    status, code, message = refusal(listed, "http://nowhere.test/")  # off the list and unresolved: unchecked
    assert (status, code) == (403, "navigation_blocked") and "could not resolve navigation host" in message
    rebind = NavigationPolicy.from_config(make_config(tmp_path, **{"security.allowedDomains": ["example.com"]})
                                          .security, lambda _h: ["127.0.0.1"])
    assert refusal(rebind, "http://rebind.test/")[1] == "navigation_blocked"  # a name is no local page
    anywhere = policy(tmp_path)  # "*" (the default): anywhere but metadata
    assert anywhere.check("http://10.0.0.5/").url and anywhere.check("http://intranet.test/").url


def test_redirects_from_the_web_may_not_send_the_agent_into_this_machine_or_off_the_list(
        tmp_path: Any) -> None:
    names = {**METADATA_NAMES, "rebind.test": ["127.0.0.1"]}
    listed = NavigationPolicy.from_config(make_config(tmp_path, **{"security.allowedDomains": [
        "shop.test", "wiki.corp.test", "rebind.test", "127.0.0.1", "localhost"]}).security, names.get)

    def refused(*hops: str) -> str:
        try:
            listed.check_redirects(list(hops))
        except Forbidden as exc:
            assert exc.code == "navigation_blocked"
            return exc.message
        raise AssertionError(f"{hops} was let through")

    assert "shop.test sent the browser to this machine (127.0.0.1)" in refused("http://shop.test/",
                                                                               "http://127.0.0.1:9/")
    assert "this machine" in refused("http://shop.test/a", "http://shop.test/b", "http://localhost:9/")
    assert "this machine" in refused("http://rebind.test/", "http://127.0.0.1:9/")  # a name is no local page
    assert "intranet.test resolves to 10.1.2.3" in refused("http://shop.test/", "http://intranet.test/")
    listed.check_redirects(["http://shop.test/", "http://wiki.corp.test/sso"])  # a listed intranet host
    listed.check_redirects(["http://localhost:8/", "http://127.0.0.1:9/"])  # the machine's own pages
    listed.check_redirects(["http://shop.test/a", "http://shop.test/b"])
    with pytest.raises(Forbidden):  # each hop is judged as a navigation there would be
        listed.check_redirects(["http://shop.test/", "http://169.254.169.254/latest/"])
    anywhere = NavigationPolicy.from_config(make_config(tmp_path).security, names.get)  # "*": open, as ever
    anywhere.check_redirects(["http://shop.test/", "http://127.0.0.1:9/", "http://intranet.test/"])


def test_a_resolver_that_does_not_answer_in_time_is_given_up_on(tmp_path: Any) -> None:
    release = threading.Event()
    slow = NavigationPolicy.from_config(make_config(tmp_path).security,
                                        lambda _h: ["169.254.169.254"] if release.wait(10) else [],
                                        resolve_timeout_s=0.05)
    started = time.monotonic()
    try:
        assert slow.check("http://slow.test/").url == "http://slow.test/"
    finally:
        release.set()
    assert time.monotonic() - started < 2


# --- the API's paths ---------------------------------------------------------------------------------------
@pytest.fixture
def stubbed(app_factory: Any) -> Any:
    """An app (default config, overrides on top) whose names resolve through ``stub_resolver``."""
    def build(**overrides: Any) -> Any:
        app = app_factory(**overrides)
        app.extensions[netguard.RESOLVER_EXTENSION] = stub_resolver
        return app
    return build


@pytest.mark.parametrize("url", ["http://metadata.google.internal/computeMetadata/v1/",
                                 "http://169.254.169.254.nip.io/latest/meta-data/"])
def test_navigate_tab_and_tabs_navigate_refuse_a_name_of_the_metadata_service(stubbed: Any, site: Any,
                                                                               browser: Any, url: str) -> None:
    client = stubbed().test_client()
    tab_id = client.post("/navigate", json={"url": site.url("idpi_clean.html")}).json["tabId"]
    before = len(browser.pages())
    for r in (client.post("/navigate", json={"url": url}),
              client.get("/navigate", query_string={"url": url}),
              client.post("/tab", json={"action": "new", "url": url}),
              client.post(f"/tabs/{tab_id}/navigate", json={"url": url})):
        assert r.status_code == 403 and r.json["code"] == "navigation_blocked", r.json
        assert "metadata" in r.json["error"] and r.json["details"]["host"] in url
    assert len(browser.pages()) == before  # refused before a tab was opened
    assert client.get("/url", query_string={"tabId": tab_id}).json["url"] == site.url("idpi_clean.html")


def test_strict_mode_refuses_every_navigating_path_off_the_list_and_allows_the_list(app_factory: Any,
                                                                                    site: Any) -> None:
    client = app_factory(**STRICT_LOCAL).test_client()
    off, on = site.url("idpi_clean.html"), local(site, "idpi_clean.html")
    tab_id = client.post("/navigate", json={"url": on}).json["tabId"]
    for r in (client.post("/navigate", json={"url": off}),
              client.post("/tab", json={"action": "new", "url": off}),
              client.post(f"/tabs/{tab_id}/navigate", json={"url": off})):
        assert r.status_code == 403 and r.json["code"] == "idpi_blocked", r.json
    opened = client.post("/tab", json={"action": "new", "url": on})
    assert opened.status_code == 200 and opened.json["title"] == "Garden Tools: Rake", opened.json
    moved = client.post(f"/tabs/{tab_id}/navigate", json={"url": local(site, "form.html")})
    assert moved.status_code == 200 and moved.json["url"] == local(site, "form.html"), moved.json


def test_a_warning_off_the_list_still_reaches_the_response(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"security.allowedDomains": ["localhost"]}).test_client()
    for r in (client.post("/navigate", json={"url": site.url("idpi_clean.html")}),
              client.post("/tab", json={"action": "new", "url": site.url("idpi_clean.html")})):
        assert r.status_code == 200 and r.headers[idpi.WARNING_HEADER] == \
            "domain '127.0.0.1' is not in security.allowedDomains", r.json


# --- popups ------------------------------------------------------------------------------------------------
@pytest.fixture
def popup_app(app_factory: Any) -> Any:
    """A strict app listing only localhost (app_factory has the shared browser forget its check after)."""
    return app_factory(**STRICT_LOCAL)


@pytest.mark.parametrize("control", ["#open", "#link"])  # window.open, and a target=_blank link
def test_a_popup_off_the_list_is_closed_and_one_on_it_runs(popup_app: Any, site: Any, browser: Any,
                                                           caplog: Any, control: str) -> None:
    client = popup_app.test_client()

    def popup_to(where: str) -> dict[str, Any]:
        opener = client.post("/navigate", json={"url": local(site, "popup_opener.html") + f"?open={where}"})
        assert opener.status_code == 200, opener.json
        r = client.post("/action", json={"kind": "click", "selector": control, "tabId": opener.json["tabId"]})
        assert r.status_code == 200, r.json
        return r.json["result"]

    off = site.url("idpi_clean.html")  # 127.0.0.1: off the list
    refused = popup_to(off)
    closed = wait_until(lambda: [r.message for r in caplog.records if r.message.startswith("closed page")], 10)
    assert "domain '127.0.0.1' is not in security.allowedDomains" in closed[0]
    # Closed so fast it may never be reported; if it was, it is gone.
    wait_until(lambda: not any(p.get("url") == off for p in browser.pages()), 10)
    assert "openedTab" not in refused or not browser.has_target(refused["openedTab"])
    assert off not in {t["url"] for t in client.get("/tabs").json["tabs"]}

    allowed = popup_to(local(site, "idpi_clean.html"))["switchedToTab"]
    wait_until(lambda: any(t["id"] == allowed and t["url"] == local(site, "idpi_clean.html")
                           for t in client.get("/tabs").json["tabs"]), 10)
    read = client.get("/text", query_string={"tabId": allowed})
    assert read.status_code == 200 and "Leaf rake" in read.json["text"], read.json


def test_the_popup_check_refuses_a_metadata_name_and_lets_a_warned_host_run(stubbed: Any) -> None:
    state = stubbed(**{"security.allowedDomains": ["localhost"]}).extensions["pinchtab"]
    assert "metadata" in (state.refusal("http://metadata.google.internal/") or "")
    assert state.refusal("http://127.0.0.1:9/") is None  # off the list outside strict mode: it may run
    assert state.refusal("blob:http://localhost/x") is None  # no host to judge: the opener's own origin


def test_a_tab_restored_after_a_restart_passes_the_policy_as_it_stands(app_factory: Any, site: Any,
                                                                       browser: Any) -> None:
    from app.api import tab_policy

    state = app_factory(**STRICT_LOCAL).extensions["pinchtab"]
    on, off = local(site, "counter.html"), site.url("counter.html")  # kept by the last run; the list changed
    assert tab_policy.reopen(browser, [off, on], state.refusal) == 1
    wait_until(lambda: any(p.get("url") == on for p in browser.pages()), 10)
    assert not any(p.get("url") == off for p in browser.pages())


# --- scrape and audit: every page, and where it ended -------------------------------------------------------
@pytest.fixture
def strict_client(app_factory: Any) -> Any:
    return app_factory(**STRICT_LOCAL).test_client()


def test_scrape_reports_a_page_redirected_off_the_list_as_an_error(strict_client: Any, site: Any) -> None:
    away = redirect(site, site.url("site_shop/about.html"))
    start = local(site, "site_shop/index.html")
    r = strict_client.post("/scrape", json={"url": start, "only": [away, local(site, "site_shop/products/a.html")]})
    assert r.status_code == 200, r.json
    refused, kept = r.json["pages"]
    assert refused["url"] == away and "not in security.allowedDomains" in refused["error"]
    assert "markdown" not in refused and "title" not in refused
    assert kept["title"].startswith("Anvil") and "error" not in kept
    assert r.json["summary"]["failedPages"] == 1

    first = strict_client.post("/scrape", json={"url": redirect(site, site.url("site_shop/index.html")),
                                                "maxPages": 3}).json
    assert len(first["pages"]) == 1 and "not in security.allowedDomains" in first["pages"][0]["error"]
    inside = strict_client.post("/scrape", json={"url": redirect(site, "/site_shop/index.html"),
                                                 "maxPages": 3}).json
    assert inside["pages"][0]["title"] == "Tiny Shop" and inside["summary"]["failedPages"] == 0


def test_scrape_without_rendering_refuses_a_start_page_off_the_list_and_renders_nothing(strict_client: Any,
                                                                                      site: Any) -> None:
    off = strict_client.post("/scrape", json={"url": site.url("site_shop/index.html"), "noBrowser": True})
    assert off.status_code == 403 and off.json["code"] == "idpi_blocked", off.json
    # On the list but redirecting off it: without the browser the page is an error entry (its HTTP
    # fetch refuses this machine's hosts), and nothing of the page it was sent to is used.
    hop = strict_client.post("/scrape", json={"url": redirect(site, site.url("site_shop/index.html")),
                                              "noBrowser": True}).json
    [page] = hop["pages"]
    assert "error" in page and not page.get("markdown") and page["source"] == "http", page
    assert hop["summary"]["failedPages"] == 1


def test_audit_reports_a_page_redirected_off_the_list_as_an_error(strict_client: Any, site: Any) -> None:
    away = redirect(site, site.url("site_shop/index.html"))
    page = strict_client.post("/audit/page", json={"url": away}).json
    assert page["url"] == away and "not in security.allowedDomains" in page["error"], page
    assert "title" not in page and "screenshot" not in page and "networkRequests" not in page
    report = strict_client.post("/audit", json={"urls": [away, local(site, "site_shop/about.html")],
                                                "options": {"screenshot": False}}).json
    refused, kept = report["pages"]
    assert "not in security.allowedDomains" in refused["error"] and "title" not in refused
    assert kept["title"].startswith("About") and "error" not in kept
    assert strict_client.post("/audit/page", json={"url": site.url("site_shop/index.html")}).status_code == 403


@pytest.fixture(scope="module")
def web_browser() -> Any:
    """A browser of its own in which ``web.test`` (a name, not this machine's) reaches the test site."""
    from cdp.browser import Browser

    b = Browser(extra_flags=("--host-resolver-rules=MAP web.test 127.0.0.1",))
    b.start()
    yield b
    b.stop()


def test_navigate_refuses_a_page_the_web_redirected_into_this_machine(web_browser: Any, site: Any,
                                                                     tmp_path: Any) -> None:
    from app.api import create_app

    app = create_app(make_config(tmp_path, **{"security.allowedDomains": ["web.test", "127.0.0.1", "localhost"]}),
                     start_browser=False, browser_factory=lambda: web_browser)
    app.extensions["pinchtab"].start(background=False)
    client = app.test_client()
    web = site.url("redirect").replace("127.0.0.1", "web.test")
    before = len(web_browser.pages())
    r = client.post("/navigate", json={"url": f"{web}?to={site.url('table.html')}"})
    assert r.status_code == 403 and r.json["code"] == "navigation_blocked", r.json
    assert r.json["details"] == {"field": "url", "host": "127.0.0.1", "from": "web.test",
                                 "setting": "security.allowedDomains"}
    assert len(web_browser.pages()) == before  # the tab it opened for the page is closed again
    kept = client.post("/navigate", json={"url": site.url("form.html")}).json["tabId"]
    r = client.post(f"/tabs/{kept}/navigate", json={"url": f"{web}?to={site.url('table.html')}"})
    assert r.status_code == 403 and client.get(f"/tabs/{kept}/url").json["url"] == "about:blank"  # not left there
    # The web's own redirects, and the machine's own pages sending the browser on, are as ever.
    on_web = client.post("/navigate", json={"url": f"{web}?to=/table.html"})
    assert on_web.status_code == 200 and on_web.json["url"] == site.url("table.html").replace("127.0.0.1", "web.test")
    at_home = client.post("/navigate", json={"url": f"{site.url('redirect')}?to={site.url('form.html')}"})
    assert at_home.status_code == 200 and at_home.json["title"] == "E2E Test - Form"
    app.extensions["pinchtab"].stop()
