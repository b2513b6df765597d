"""Progress on long reads: bytes and bytes/s on stderr for big inputs on a TTY, else nothing.

Scanners never print. They take an optional callback and call it with the bytes they just read:

    def scan(path: str, progress: ByteProgress | None = None) -> ...:
        for chunk in ...:
            ...
            if progress:
                progress(len(chunk))

and whoever drives them (a gatherer, the CLI) makes one with `byte_progress`:

    with byte_progress("hashing weights", total_bytes) as advance:
        scan(path, progress=advance)

A bar appears only when stderr is a TTY, the input is over `THRESHOLD` bytes, and the run is not
quiet (`configure(quiet=True)`, set by `-q`). stdout is never touched, so `--json -` stays clean.
click is imported only when a bar is actually drawn.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

ByteProgress = Callable[[int], None]

THRESHOLD = 100_000_000  # bytes: smaller inputs finish before a bar is worth drawing
_MIN_INTERVAL = 0.1  # seconds between redraws

_state: dict[str, Any] = {"quiet": False, "stream": None, "force": False}
_active = threading.Lock()  # one bar at a time; concurrent scanners beyond it stay silent


def configure(
    quiet: bool | None = None, stream: TextIO | None = None, force: bool | None = None
) -> None:
    """Set once per run: quiet (-q) silences every bar; stream and force are for tests."""
    if quiet is not None:
        _state["quiet"] = quiet
    if stream is not None:
        _state["stream"] = stream
    if force is not None:
        _state["force"] = force


def _stream() -> TextIO:
    return _state["stream"] or sys.stderr


def enabled(total: int | None) -> bool:
    """Whether an input of TOTAL bytes gets a bar in this run."""
    if _state["quiet"] or total is None or total <= THRESHOLD:
        return False
    if _state["force"]:
        return True
    try:
        return bool(_stream().isatty())
    except (AttributeError, ValueError):
        return False


def human_bytes(n: float) -> str:
    """1536 → '1.5 KiB'; binary units, one decimal."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _noop(_n: int) -> None:
    return None


class _Bar:
    """click's progress bar, fed bytes, labelled with bytes done and the rate."""

    def __init__(self, label: str, total: int) -> None:
        import click  # lazy: only when a bar is drawn

        self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.pending = 0
        self.bar = click.progressbar(
            length=total,
            label=label,
            file=_stream(),
            show_eta=True,
            show_percent=True,
            item_show_func=self._describe,
            width=24,
        )
        self.bar.__enter__()

    def _describe(self, _item: Any) -> str:
        elapsed = max(time.monotonic() - self.start, 1e-6)
        rate = human_bytes(self.done / elapsed)
        return f"{human_bytes(self.done)} of {human_bytes(self.total)}, {rate}/s"

    def advance(self, n: int) -> None:
        if n <= 0:
            return
        self.done += n
        self.pending += n
        now = time.monotonic()
        if now - self.last >= _MIN_INTERVAL or self.done >= self.total:
            self.last = now
            self.bar.update(self.pending, current_item=self.done)
            self.pending = 0

    def close(self) -> None:
        if self.pending:
            self.bar.update(self.pending, current_item=self.done)
        self.bar.__exit__(None, None, None)


@contextlib.contextmanager
def byte_progress(label: str, total: int | None) -> Iterator[ByteProgress]:
    """A callback to feed with bytes read; draws a bar only when `enabled(total)`."""
    if not enabled(total) or not _active.acquire(blocking=False):
        yield _noop
        return
    try:
        bar = _Bar(label, int(total or 0))
        try:
            yield bar.advance
        finally:
            bar.close()
    finally:
        _active.release()


def tree_bytes(path: str) -> int | None:
    """Total size of the regular files under PATH, or of PATH itself when it is a file (symlinks
    not followed); None when unreadable."""
    total = 0
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode):
            return st.st_size
        for root, _dirs, files in os.walk(path, followlinks=False):
            for name in files:
                with contextlib.suppress(OSError):
                    st = os.lstat(os.path.join(root, name))
                    if stat.S_ISREG(st.st_mode):
                        total += st.st_size
    except OSError:
        return None
    return total
