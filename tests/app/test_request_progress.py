"""When a request's bytes so far can go to a thread (app/serving/request_progress.py): pure logic."""
from __future__ import annotations

import pytest

from app.serving.request_progress import Progress, progress

HEAD = b"POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n"


def ready(buf: bytes, **kw: int) -> Progress:
    return progress(buf, head_max=kw.get("head_max", 1000), body_max=kw.get("body_max", 100),
                    searched=kw.get("searched", 0))[0]


@pytest.mark.parametrize("buf, expected", [
    (b"", Progress.HEAD),
    (b"GET /health HTTP/1.1\r\nHost: x", Progress.HEAD),  # the stalled client's half a head
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", Progress.READY),
    (b"GET / HTTP/1.1\nHost: x\n\n", Progress.READY),  # bare LF: the parser rules on it
    (HEAD + b"ab", Progress.BODY),
    (HEAD + b"abcde", Progress.READY),
    (HEAD + b"abcdeGET / HTTP/1.1\r\n", Progress.READY),  # the next (pipelined) request starts after
])
def test_a_request_is_ready_once_its_head_and_body_are_in(buf, expected):
    assert ready(buf) is expected


@pytest.mark.parametrize("head_line", [
    b"Transfer-Encoding: chunked",  # the thread reads chunks itself, each read bounded
    b"Expect: 100-continue",  # the client waits for our go-ahead before its body
    b"Content-Length: 101",  # over body_max: the thread reads it
    b"Content-Length: 5x",  # not a number: the parser's 400
])
def test_bodies_left_to_the_thread_or_the_parser_are_ready_after_the_head(head_line):
    assert ready(b"POST / HTTP/1.1\r\n" + head_line + b"\r\n\r\n") is Progress.READY


def test_two_lengths_and_an_overlong_head_go_to_the_parser():
    assert ready(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n") is Progress.READY
    assert ready(b"GET /" + b"a" * 2000, head_max=1000) is Progress.READY


def test_the_length_to_wait_for_is_the_head_and_the_body():
    assert progress(HEAD + b"ab", head_max=1000, body_max=100) == (Progress.BODY, len(HEAD) + 5)


def test_a_head_end_split_across_reads_is_found_from_where_the_last_search_stopped():
    first = b"GET / HTTP/1.1\r\nHost: x\r\n\r"
    assert ready(first) is Progress.HEAD
    assert ready(first + b"\n", searched=len(first)) is Progress.READY
