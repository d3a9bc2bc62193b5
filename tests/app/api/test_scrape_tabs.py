"""The tabs behind ``POST /scrape``: each crawl worker keeps one tab to fetch or render its pages in
for the whole crawl, and nothing of one page reaches the next: a failed fetch, a 404, a refused
redirect, what a rendered page left in its tab (session storage, window name, history, network log).
A crawl closes every tab it opened.

As in test_site_tools, this module's browser maps ``fixtures.test`` to the test server and the app
takes that name for a public host: by it a page is fetched over HTTP; by 127.0.0.1 the HTTP fetch is
refused and the page is rendered.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from support.mapped_hosts import fixtures_resolver, mapped_browser

from app.api import progress
from app.api.routes.transfer import browser_fetch
from app.policy import netguard
from app.web.errors import APIError
from cdp.browser import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from mapped_browser()


@pytest.fixture
def client(app_factory: Any) -> Any:
    app = app_factory()
    app.extensions[netguard.RESOLVER_EXTENSION] = fixtures_resolver
    return app.test_client()


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the tabs opened from now on (each still opened by the browser itself)."""
    ids: list[str] = []
    real = Browser.new_tab

    def counted(self: Browser, *args: Any, **kwargs: Any) -> Any:
        tab = real(self, *args, **kwargs)
        ids.append(tab.id)
        return tab

    monkeypatch.setattr(Browser, "new_tab", counted)
    return ids


def public(site: Any, path: str) -> str:
    return f"http://fixtures.test:{site.port}/{path}"


def scrape(client: Any, **body: Any) -> dict[str, Any]:
    r = client.post("/scrape", json={"timeoutSeconds": 120, **body})
    assert r.status_code == 200, r.json
    return dict(r.json)


def test_a_crawl_keeps_a_tab_per_worker_and_closes_them_all(client, browser, site, opened):
    from support.site import MANY_PAGES

    before = {p["targetId"] for p in browser.pages()}
    fetched = scrape(client, url=public(site, "many/"), maxPages=MANY_PAGES, concurrency=4)
    assert fetched["summary"]["httpPages"] == MANY_PAGES
    assert len(opened) <= 4 + 4, opened  # a parser and a fetch tab per worker, not a tab per page
    assert {p["targetId"] for p in browser.pages()} == before

    opened.clear()
    rendered = scrape(client, url=site.url("many/"), maxPages=8, concurrency=2)  # fetches refused: rendered
    assert rendered["summary"]["browserPages"] == 8
    assert len(opened) <= 2, opened  # a rendering tab per worker; nothing to parse
    assert {p["targetId"] for p in browser.pages()} == before


def test_a_failed_fetch_leaves_nothing_for_the_next_page(client, browser, site):
    missing = public(site, "many/p99.html")                                         # a 404
    refused = public(site, "redirect?to=http://169.254.169.254/latest/meta-data/")  # a hop the policy refuses
    hop = public(site, "redirect?to=/many/p3.html")                                 # a hop followed
    order = [missing, public(site, "many/p1.html"), refused, public(site, "many/p2.html"), hop,
             public(site, "many/p4.html")]
    before = {p["targetId"] for p in browser.pages()}
    crawl = scrape(client, url=order[0], only=order, concurrency=1, noBrowser=True)["pages"]
    assert [p["url"] for p in crawl] == order
    # Each page as a crawl of it alone (its own tabs) reports it.
    for page in crawl:
        assert page == scrape(client, url=page["url"], only=[page["url"]], noBrowser=True)["pages"][0]
    assert crawl[0]["statusCode"] == 404 and "404" in crawl[0]["error"]
    assert "redirect to http://169.254.169.254/" in crawl[2]["error"] and "statusCode" not in crawl[2]
    for n, page in ((1, crawl[1]), (2, crawl[3]), (3, crawl[4]), (4, crawl[5])):
        assert page["statusCode"] == 200 and page["title"] == f"Page {n}" and "error" not in page, page
        assert page["markdown"].startswith(f"# Page {n}")
    assert {p["targetId"] for p in browser.pages()} == before


def test_a_fetch_takes_its_event_handlers_off_the_tab_it_leaves_for_the_next(tab, site):
    anywhere = netguard.Policy.for_download((), ("*",), fixtures_resolver)   # the tests' config
    public_only = netguard.Policy.for_download((), (), fixtures_resolver)    # checks the address connected to
    events = ("Fetch.requestPaused", "Network.responseReceivedExtraInfo")
    handlers = {e: len(tab._handlers[e]) for e in events}

    def fetch(path: str, policy: netguard.Policy = anywhere) -> dict[str, Any]:
        return dict(tab.run(lambda: browser_fetch(tab, public(site, path), policy, 1 << 20, 10.0), 15.0))

    with pytest.raises(APIError, match="the server answered 404"):
        fetch("many/p99.html")
    with pytest.raises(APIError, match="connected to an internal address"):
        fetch("many/p1.html", public_only)
    assert b"<h1>Page 1</h1>" in fetch("many/p1.html")["data"]
    got = fetch("redirect?to=/many/p2.html")
    assert got["url"].endswith("/many/p2.html") and b"<h1>Page 2</h1>" in got["data"] and got["status"] == 200
    assert {e: len(tab._handlers[e]) for e in events} == handlers


def test_a_page_rendered_after_another_finds_the_tab_as_new(client, site, opened):
    visits = [site.url(f"scrape_tabs/visit.html?n={n}") for n in range(3)]
    missing = site.url("many/p99.html")
    alone = scrape(client, url=visits[0], only=[visits[0]])["pages"][0]
    assert alone["source"] == "browser" and alone["markdown"].startswith("# Visit 1"), alone
    opened.clear()
    crawl = scrape(client, url=visits[0], only=[visits[0], missing, visits[1], visits[2]], concurrency=1)["pages"]
    assert len(opened) == 1, opened  # one tab rendered them all
    assert [p["source"] for p in crawl] == ["browser"] * 4
    assert crawl[1]["statusCode"] == 404 and "no such page" in crawl[1]["markdown"]
    for page in (crawl[0], crawl[2], crawl[3]):
        # No session storage, window name or history of the pages before, and its own status.
        assert page["markdown"] == alone["markdown"] and page["statusCode"] == 200, page


def test_a_stream_ends_as_soon_as_its_run_does():
    follow = progress.Progress()
    seen = follow.version
    waited: list[int] = []
    reader = threading.Thread(target=lambda: waited.append(follow.wait(seen, 60.0)), daemon=True)
    reader.start()
    follow.wake()  # the run ended, with nothing new to say: the reader is not left to its heartbeat
    reader.join(10.0)
    assert not reader.is_alive() and waited == [seen]
