"""A bounded process scan: per-process /proc reads run in abandonable daemon threads under one
deadline, so a process stuck in the kernel (a hung NFS mmap) cannot stall the audit."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
SCAN_WORKERS = 4  # a hung read costs one worker; the others go on reading


@dataclass(frozen=True)
class ProcessGap:
    """A process whose /proc files did not answer within the scan's deadline."""

    pid: int
    path: str  # the file being read when the deadline passed ("" when never started)
    seconds: float

    def describe(self) -> str:
        if not self.path:
            return f"process {self.pid} was not read: the {self.seconds:g} s scan deadline passed"
        return f"process {self.pid} did not answer {self.path} within {self.seconds:g} s"

    def to_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "path": self.path, "seconds": self.seconds}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ProcessGap:
        return cls(int(d["pid"]), str(d.get("path") or ""), float(d["seconds"]))


def describe_gaps(gaps: Sequence[ProcessGap], shown: int = 3) -> str:
    """'process 1234 did not answer /proc/1234/cmdline within 5 s (+2 more)'."""
    text = "; ".join(g.describe() for g in gaps[:shown])
    return text + (f" (+{len(gaps) - shown} more)" if len(gaps) > shown else "")


Reader = Callable[[int, Callable[[str], None]], Any]


def scan(
    pids: Sequence[int], read: Reader, seconds: float, workers: int = SCAN_WORKERS
) -> tuple[list[Any], list[ProcessGap]]:
    """Call `read(pid, note)` for every pid in daemon threads; `note(path)` tells which file it
    is about to read. Returns the non-None answers in pid order and a gap for every pid that had
    not answered when `seconds` passed (its threads are abandoned, never joined)."""
    todo: queue.Queue[int] = queue.Queue()
    for pid in pids:
        todo.put(pid)
    lock = threading.Lock()
    answers: dict[int, Any] = {}
    reading: dict[int, str] = {}  # pid -> file being read, while a worker is on it
    done = threading.Event()
    deadline = time.monotonic() + max(0.0, seconds)

    def work() -> None:
        while time.monotonic() < deadline:
            try:
                pid = todo.get_nowait()
            except queue.Empty:
                return

            def note(path: str, pid: int = pid) -> None:
                with lock:
                    reading[pid] = path

            note("")
            try:
                value = read(pid, note)
            except Exception:
                value = None
            with lock:
                reading.pop(pid, None)
                answers[pid] = value
                if len(answers) == len(pids):
                    done.set()

    if not pids:
        return [], []
    for _ in range(max(1, min(workers, len(pids)))):
        threading.Thread(target=work, name="ascend-audit-procscan", daemon=True).start()
    done.wait(max(0.0, deadline - time.monotonic()))
    with lock:
        got = dict(answers)
        busy = dict(reading)
    gaps = [ProcessGap(pid, busy.get(pid, ""), seconds) for pid in pids if pid not in got]
    return [got[p] for p in pids if p in got and got[p] is not None], gaps


def call_bounded(fn: Callable[[], T], seconds: float) -> tuple[bool, T | None]:
    """(True, fn()) when fn returns within `seconds`, else (False, None); the daemon thread
    running a hung fn is abandoned."""
    box: list[Any] = []
    ready = threading.Event()

    def run() -> None:
        try:
            box.append(fn())
        except Exception as exc:  # the caller's fn decides what an error means
            box.append(exc)
        ready.set()

    threading.Thread(target=run, name="ascend-audit-bounded", daemon=True).start()
    if not ready.wait(max(0.0, seconds)):
        return False, None
    if isinstance(box[0], Exception):
        raise box[0]
    return True, box[0]
