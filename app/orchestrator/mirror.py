"""The worker's copy of the manager's instance table, kept fresh by one watch thread.

Routing a browser request must not cost a trip to the manager, so the worker keeps the table
(records and internal tokens) in memory. The ``manager-watch`` thread long-polls ``list`` with the
last generation it saw; the manager answers as soon as anything changes, so the copy trails the
truth by one socket round trip.
"""
from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from typing import Any

from .client import ManagerClient
from .errors import ManagerUnavailable

log = logging.getLogger(__name__)

WATCH_WAIT_S = 20.0
RETRY_S = 0.5


class InstanceMirror:
    """Records and tokens by instance id, the default instance, and a condition to wait on."""

    def __init__(self, client: ManagerClient) -> None:
        self.client = client
        self.generation: int | None = None
        self.default_id: str | None = None
        self.connected = False
        self._records: dict[str, dict[str, Any]] = {}
        self._tokens: dict[str, str] = {}
        self._restarting: set[str] = set()
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._listeners: list[Callable[[set[str]], None]] = []
        self._turn = -1  # round_robin's last pick

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the watch thread."""
        self._thread = threading.Thread(target=self._watch_loop, name="manager-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the watch thread (at its next wake-up)."""
        self._stop.set()

    def _watch_loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.apply(self.client.list(after=self.generation, wait_s=WATCH_WAIT_S))
            except ManagerUnavailable:
                with self._cond:
                    if self.connected:
                        log.error("lost the instance manager")
                    self.connected = False
                    self._cond.notify_all()
                self._stop.wait(RETRY_S)
            except Exception:  # a bug must not end the watch: routing would freeze on old data
                log.exception("instance watch failed")
                self._stop.wait(RETRY_S)

    # --- reading ---------------------------------------------------------------------------------
    def on_change(self, listener: Callable[[set[str]], None]) -> None:
        """Call ``listener(ids)`` with the ids of instances that stopped, failed or restarted."""
        self._listeners.append(listener)

    def refresh(self) -> dict[str, Any]:
        """Fetch the table now (raises ManagerUnavailable); returns the manager's answer."""
        data = self.client.list()
        self.apply(data)
        return data

    def apply(self, data: dict[str, Any]) -> None:
        """Take a ``list`` answer (ignoring one older than what we have)."""
        gone: set[str] = set()
        with self._cond:
            if self.generation is not None and data["generation"] < self.generation:
                return
            records = {item["record"]["id"]: item["record"] for item in data["instances"]}
            for iid, old in self._records.items():
                new = records.get(iid)
                if new is None or new["status"] != "running" or new["startTime"] != old["startTime"]:
                    if old["status"] == "running":
                        gone.add(iid)
            self._records = records
            self._tokens = {item["record"]["id"]: item["token"] for item in data["instances"]}
            self._restarting = {item["record"]["id"] for item in data["instances"] if item.get("restarting")}
            self.default_id = data.get("default")
            self.generation = data["generation"]
            self.connected = True
            self._cond.notify_all()
        for listener in self._listeners:
            if gone:
                listener(gone)

    def ensure_loaded(self) -> None:
        """Before the first answer of the watch thread (a fresh worker), fetch the table once."""
        if self.generation is None:
            self.refresh()

    def records(self) -> list[dict[str, Any]]:
        """Every instance record, as of the last answer."""
        with self._cond:
            return list(self._records.values())

    def get(self, instance_id: str) -> tuple[dict[str, Any], str] | None:
        """(record, internal token) of an instance, or None."""
        with self._cond:
            rec = self._records.get(instance_id)
            return (rec, self._tokens[instance_id]) if rec is not None else None

    def restarting(self, instance_id: str) -> bool:
        """True while a crashed instance waits for its planned restart."""
        with self._cond:
            return instance_id in self._restarting

    def default_target(self, policy: str = "fcfs") -> str | None:
        """Where shorthand routes go (``multiInstance.allocationPolicy``): ``fcfs``, the default
        instance while it exists, else the oldest running one; ``round_robin``, each running
        instance in turn; ``random``, any running one. With none running: one that is starting."""
        with self._cond:
            running = sorted((r for r in self._records.values() if r["status"] == "running"),
                             key=lambda r: r["startTime"])
            if running and policy == "round_robin":
                self._turn = (self._turn + 1) % len(running)
                return running[self._turn]["id"]
            if running and policy == "random":
                return random.choice(running)["id"]
            rec = self._records.get(self.default_id or "")
            if rec is not None:
                return rec["id"]
            for wanted in ("running", "starting", "error"):
                found = sorted((r for r in self._records.values() if r["status"] == wanted),
                               key=lambda r: r["startTime"])
                if found:
                    return found[0]["id"]
        return None

    def wait_settled(self, instance_id: str, timeout_s: float) -> dict[str, Any] | None:
        """Wait up to ``timeout_s`` while the instance is starting or waiting to restart; its record.
        A lost instance is settled: only a restart someone asks for brings it back."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while True:
                rec = self._records.get(instance_id)
                if rec is None or rec["status"] in ("running", "stopping", "stopped", "lost"):
                    return rec
                if rec["status"] == "error" and instance_id not in self._restarting:
                    return rec  # failed for good: no restart is coming
                left = deadline - time.monotonic()
                if left <= 0:
                    return rec
                self._cond.wait(left)
