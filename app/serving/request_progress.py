"""How far a request has arrived: from the bytes a client sent so far, whether a thread can take it.

The worker (``app/serving/worker.py``) gathers a request's bytes off the request threads and hands it to
one only when the thread will not wait on the client: the head is complete and so is a body of
known, modest size. Anything this module does not understand is handed over as well, and
gunicorn's parser gives its answer (a 400, 414 or 431); the thread's reads are bounded all the same.
Pure logic: no sockets here.
"""
from __future__ import annotations

import enum
import re

# A head ends at an empty line (bare LF line ends reach the parser too, which rules on them).
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_DIGITS = re.compile(rb"[0-9]+")
# The fields that say how a body comes, each on a line of its own (never the request line), named
# with any case and stray whitespace around the name. Found by the regex engine, not a loop over
# every line of the head: this runs on every request.
_BODY_FIELDS = re.compile(rb"\n[ \t\r\x0b\x0c]*(transfer-encoding|expect|content-length)[ \t\r\x0b\x0c]*:([^\n]*)",
                          re.IGNORECASE)


class Progress(enum.Enum):
    """What a connection's bytes so far amount to."""

    HEAD = "head"  # the head is incomplete: wait for more (under the head timeout)
    BODY = "body"  # the head is in, the body is on its way: wait for more (under the body timeout)
    READY = "ready"  # a thread can take it now


def progress(buf: bytes | bytearray, *, head_max: int, body_max: int, searched: int = 0) -> tuple[Progress, int]:
    """Whether the request at the start of ``buf`` can go to a thread, and how many bytes it
    takes in all when that is known (head and body: the BODY phase waits for that many).

    READY once the head and its ``Content-Length`` body are in; also when the head is over
    ``head_max`` bytes or malformed (the parser answers it), and when the body is chunked, follows
    an ``Expect: 100-continue`` or is over ``body_max`` bytes (the thread reads it, with a timeout).
    ``searched``: how many bytes of ``buf`` an earlier call saw without finding the head's end
    (a client sending a byte at a time must not cost a scan of the whole buffer per byte).
    """
    found = _HEAD_END.search(buf, max(searched - 3, 0), head_max + 4)
    if found is None:
        return (Progress.READY if len(buf) > head_max else Progress.HEAD), 0
    length = _body_length(bytes(buf[:found.start()]))
    if length is None or length > body_max:
        return Progress.READY, 0
    total = found.end() + length
    return (Progress.READY if len(buf) >= total else Progress.BODY), total


def _body_length(head: bytes) -> int | None:
    """The body's length to wait for here: 0 when none; None when a thread should read it (or the
    parser should refuse it): chunked, expected, or an unclear length."""
    length = 0
    seen = False
    for found in _BODY_FIELDS.finditer(head):
        if found.group(1).lower() != b"content-length":
            return None
        value = found.group(2).strip()
        if seen or not _DIGITS.fullmatch(value):
            return None  # two lengths, or not a number: the parser's 400
        seen, length = True, int(value)
    return length
