"""The one cap on long-lived connections (``app.sockets.limiter``): places, the apps' share, shutdown."""
from __future__ import annotations

import pytest

from app.sockets.limiter import Limiter, app_share
from app.web.errors import Unavailable


def places(limiter: Limiter, n: int, *, app: bool = False) -> list[bool]:
    """Try ``n`` places; True for each taken, False for each refused (503)."""
    taken = []
    for _ in range(n):
        try:
            limiter.acquire(app=app)
            taken.append(True)
        except Unavailable as exc:
            assert exc.code == "too_many_connections" and exc.headers == {"Retry-After": "5"}
            taken.append(False)
    return taken


def test_apps_get_only_their_share_of_the_connection_slots() -> None:
    assert [app_share(n) for n in (1, 2, 4, 8, 16, 24)] == [1, 1, 3, 6, 12, 18]
    limiter = Limiter(4)
    assert places(limiter, 4, app=True) == [True, True, True, False]
    with pytest.raises(Unavailable, match="apps may hold 3 of debug.maxConnections"):
        limiter.acquire(app=True)
    agent = limiter.acquire()                       # an agent or stream: the reserve
    assert places(limiter, 1) == [False]
    assert limiter.describe() == {"connections": 4, "maxConnections": 4, "appConnections": 3, "maxAppConnections": 3}
    agent.release()
    agent.release()                                 # twice is fine: the place is given back once
    assert (limiter.connections, limiter.app_connections) == (3, 3)
    assert places(limiter, 2) == [True, False]


def test_a_shutdown_ends_every_holder_and_refuses_new_ones() -> None:
    limiter = Limiter(4)
    ended: list[str] = []
    first, second = limiter.acquire(), limiter.acquire(app=True)
    first.on_close(lambda: ended.append("first"))

    def broken() -> None:
        raise RuntimeError("cannot close")

    second.on_close(broken)                         # one that cannot be closed keeps no other open
    third = limiter.acquire()
    third.on_close(lambda: ended.append("third"))
    limiter.close_all()
    assert sorted(ended) == ["first", "third"]
    assert places(limiter, 1) == [False]
    late = Limiter(2)
    hold = late.acquire()
    late.close_all()
    hold.on_close(lambda: ended.append("late"))     # a connection starting after the shutdown began
    assert ended[-1] == "late"


def test_another_cap_names_itself() -> None:
    streams = Limiter(1, what="log streams (at most 1 at once)", code="too_many_streams")
    streams.acquire()
    with pytest.raises(Unavailable, match="too many log streams") as refused:
        streams.acquire()
    assert refused.value.code == "too_many_streams" and refused.value.status == 503
