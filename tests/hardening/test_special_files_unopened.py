"""A FIFO, socket or device the auditor meets is judged by what it is and never opened.

Opening is an act: it releases a FIFO's waiting writer and runs a device's driver (a watchdog
arms, a tape rewinds). The observable case in a test is the FIFO: a writer blocked in open()
stays blocked when the auditor only looked at the file. Covered: a sysroot read, a user-given
input (open_regular) and a directory snapshot's member.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from ascend_audit import safe_io
from ascend_audit.host.bundle import SnapshotError
from ascend_audit.host.live import LiveHost
from ascend_audit.host.snapshot import SnapshotHost
from ascend_audit.safe_io import NotRegularFile, open_regular


class Writer:
    """A thread blocked in open(fifo, O_WRONLY) until some reader opens the FIFO."""

    def __init__(self, fifo: Path) -> None:
        self.fifo = fifo
        self.released = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            fd = os.open(self.fifo, os.O_WRONLY)
        except OSError:
            return
        self.released.set()
        os.close(fd)

    def close(self) -> None:
        """Release the writer ourselves so the thread ends."""
        fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)
        self.thread.join(timeout=5)
        os.close(fd)


@pytest.fixture(params=["openat2", "nofollow-walk", "no-proc"])
def how(request, monkeypatch):
    """Both resolvers, and the walk on a machine without /proc (reopened by path, then the
    inode compared)."""
    if request.param == "openat2" and not safe_io._has_openat2():
        pytest.skip("this kernel has no openat2 (the walk is tested instead)")
    monkeypatch.setattr(safe_io, "_openat2_works", request.param == "openat2")
    if request.param == "no-proc":
        real_open, real_isdir = os.open, os.path.isdir

        def no_proc_open(path, *args, **kwargs):
            if str(path).startswith("/proc/self/fd/"):
                raise FileNotFoundError(2, "No such file or directory", path)
            return real_open(path, *args, **kwargs)

        monkeypatch.setattr(os, "open", no_proc_open)
        monkeypatch.setattr(os.path, "isdir", lambda p: p != "/proc/self/fd" and real_isdir(p))
    return request.param


@pytest.fixture
def waiting_writer():
    writers: list[Writer] = []

    def make(fifo: Path) -> Writer:
        fifo.parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(fifo)
        w = Writer(fifo)
        writers.append(w)
        return w

    yield make
    for w in writers:
        w.close()


def test_a_fifo_in_the_sysroot_is_not_opened(tmp_path, waiting_writer, how):
    root = tmp_path / "node"
    writer = waiting_writer(root / "etc" / "os-release")
    read = LiveHost(str(root)).read_text("/etc/os-release")
    assert read.text is None and "a FIFO" in (read.error or ""), read
    assert not writer.released.wait(0.3), "the auditor opened the FIFO (its writer was released)"


def test_a_fifo_given_as_an_input_is_not_opened(tmp_path, waiting_writer, how):
    writer = waiting_writer(tmp_path / "serving.log")
    with pytest.raises(NotRegularFile, match="a FIFO"):
        open_regular(tmp_path / "serving.log")
    assert not writer.released.wait(0.3), "open_regular opened the FIFO"


def test_a_fifo_in_a_directory_snapshot_is_not_opened(tmp_path, waiting_writer, how):
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    writer = waiting_writer(bundle / "commands" / "0000.out")
    manifest = {
        "format": "ascend-audit-snapshot",
        "format_version": 1,
        "commands": [{"argv": ["npu-smi", "info"], "status": "ok", "stdout": "commands/0000.out"}],
    }
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(SnapshotError, match="does not hold as a plain file"):
        SnapshotHost(str(bundle))
    assert not writer.released.wait(0.3), "loading the snapshot opened the FIFO"


def test_regular_files_and_directories_still_read(tmp_path, how):
    root = tmp_path / "node"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "hostname").write_text("n1\n")
    (root / "etc" / "link").symlink_to("hostname")
    host = LiveHost(str(root))
    assert host.read_text("/etc/hostname").text == "n1\n"
    assert host.read_text("/etc/link").text == "n1\n"
    assert host.listdir("/etc") == ["hostname", "link"]
    with open_regular(root / "etc" / "link", "r") as fh:
        assert fh.read() == "n1\n"
