"""The process scan is bounded: a process stuck in the kernel (its /proc/PID/cmdline read hangs,
as behind a hung NFS mmap) costs one deadline, is named, and leaves the table incomplete:
DRV-NPU-003 does not PASS on it, and a replay of the recorded bundle gives the same verdict."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from fakenode import FakeNpu, npu_smi_outputs
from standins import node_env, standin
from sysroot import NPU_BDFS, healthy_910b_node

from ascend_audit.context import Context, Inputs
from ascend_audit.engine import Selection, run_audit
from ascend_audit.host import live as live_mod
from ascend_audit.host.base import ProcessIdentity, ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.host.procscan import scan
from ascend_audit.host.snapshot import RecordingHost, SnapshotHost
from ascend_audit.policy import parse_policy
from ascend_audit.registry import load_registry

SLOW = 1234
MARGIN = 3.0  # the machine is shared; the deadline itself is what is asserted against


@pytest.fixture
def release():
    gate = threading.Event()
    yield gate
    gate.set()  # let the abandoned readers finish once the test is over


def _proc(pid: int, *cmd: str) -> ProcessInfo:
    return ProcessInfo(pid, cmd[0], "/usr/bin/python3", cmd, "root")


def test_a_hung_read_costs_one_deadline_names_the_pid_and_the_rest_are_read(release):
    def read(pid, note):
        note(f"/proc/{pid}/cmdline")
        if pid == SLOW:
            release.wait()
        return _proc(pid, "python3", str(pid))

    start = time.monotonic()
    found, gaps = scan([1, SLOW, 2000, 2001, 2002, 2003, 2004], read, 0.5, workers=2)
    assert time.monotonic() - start < 0.5 + MARGIN
    assert [p.pid for p in found] == [1, 2000, 2001, 2002, 2003, 2004]
    assert [g.describe() for g in gaps] == [
        f"process {SLOW} did not answer /proc/{SLOW}/cmdline within 0.5 s"
    ]


def test_a_real_fifo_that_never_answers_is_abandoned(tmp_path, release):
    fifo = tmp_path / "cmdline"
    os.mkfifo(fifo)

    def read(pid, note):
        if pid == SLOW:
            note(str(fifo))
            with open(fifo, "rb") as fh:  # blocks: nobody opens the other end
                return fh.read()
        return _proc(pid, "sleep", "1")

    start = time.monotonic()
    found, gaps = scan([SLOW, 7], read, 0.3)
    assert time.monotonic() - start < 0.3 + MARGIN
    assert [p.pid for p in found] == [7]
    assert gaps[0].pid == SLOW and gaps[0].path == str(fifo)
    # unblock the abandoned open so its thread ends
    with open(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK), "wb", closefd=True):
        pass


def test_pids_never_reached_are_gaps_too(release):
    def read(pid, note):
        note(f"/proc/{pid}/environ")
        release.wait()

    _, gaps = scan([10, 11, 12], read, 0.2, workers=1)
    assert [g.pid for g in gaps] == [10, 11, 12]
    assert gaps[0].path == "/proc/10/environ" and gaps[1].path == ""
    assert "scan deadline passed" in gaps[1].describe()


class StuckNode(LiveHost):
    """A fake node whose process SLOW hangs in /proc/SLOW/cmdline; the others answer."""

    def __init__(self, root: str, environ: dict[str, str], gate: threading.Event) -> None:
        super().__init__(root, timeout=1.0, environ=environ)
        self.gate = gate
        self.table = {
            200: _proc(200, "vllm", "serve", "/models/q"),
            4242: _proc(4242, "python3", "train.py"),
        }

    def _process_pids(self) -> list[int]:
        return [200, SLOW, 4242]

    def _read_process(self, pid, note):
        note(f"/proc/{pid}/cmdline")
        if pid == SLOW:
            self.gate.wait()
        return self.table.get(pid)


def _busy_node(tmp_path: Path) -> dict[str, str]:
    npus = [FakeNpu(i, bdf.upper(), hbm_used=3314) for i, bdf in enumerate(NPU_BDFS)]
    npus[0].processes = [(SLOW, "VllmWorker", 30000)]
    npus[0].hbm_used = 33314
    healthy_910b_node(tmp_path / "root")
    standin(tmp_path / "bin", "npu-smi", npu_smi_outputs(npus))
    return node_env(tmp_path / "bin")


def _audit(host):
    ctx = Context(host, parse_policy(""))
    sel = Selection(only=frozenset({"DRV-NPU-003"}))
    return run_audit(load_registry(entry_points=False), ctx, sel).result("DRV-NPU-003")


def test_drv_npu_003_is_not_pass_on_an_incomplete_table_and_a_replay_agrees(tmp_path, release):
    host = StuckNode(str(tmp_path / "root"), _busy_node(tmp_path), release)
    rec = RecordingHost(host)
    start = time.monotonic()
    res = _audit(rec)
    took = time.monotonic() - start
    assert res.status.value == "ERROR", res.summary
    assert f"process {SLOW} did not answer /proc/{SLOW}/cmdline within 1 s" in res.summary
    assert "process table incomplete" in res.summary
    assert [p.pid for p in rec.processes()] == [200, 4242]  # the others were still read
    assert took < 1.0 + 2 * host.timeout + MARGIN  # the scan's deadline, npu-smi's own time
    out = rec.write_bundle(str(tmp_path / "bundle"), {"name": "ascend-audit", "version": "test"})
    replay = SnapshotHost(out)
    try:
        again = _audit(replay)
    finally:
        replay.close()
    assert (again.status, again.summary) == (res.status, res.summary)


def test_a_complete_table_still_passes_the_serving_worker(tmp_path, release):
    release.set()  # SLOW answers: it is the serving tree's worker
    host = StuckNode(str(tmp_path / "root"), _busy_node(tmp_path), release)
    host.table[SLOW] = _proc(SLOW, "vllm", "serve", "/models/q")
    res = _audit(host)
    assert res.status.value == "PASS", res.summary


def test_the_probe_is_not_started_when_the_serving_environ_does_not_answer(
    monkeypatch, tmp_path, release
):
    def stuck_read(root, path, cap):
        release.wait()
        return b""

    monkeypatch.setattr(live_mod, "read_bytes", stuck_read)
    host = LiveHost("/", timeout=0.5)
    ident = ProcessIdentity(SLOW, "/usr/bin/python3", os.getuid(), os.getgid())
    start = time.monotonic()
    res = host.run_as(["/bin/true"], 5.0, ident)
    assert time.monotonic() - start < 0.5 + MARGIN
    assert res.status == "timeout"
    assert f"process {SLOW} did not answer /proc/{SLOW}/environ within 0.5 s" in (res.error or "")


def test_process_identity_is_none_when_proc_status_hangs(monkeypatch, release):
    host = LiveHost("/", timeout=0.3)

    def stuck(pid):
        release.wait()

    monkeypatch.setattr(host, "_read_identity", stuck)
    start = time.monotonic()
    assert host.process_identity(SLOW) is None
    assert time.monotonic() - start < 0.3 + MARGIN


def _audit_visible(host):
    ctx = Context(host, parse_policy(""))
    sel = Selection(only=frozenset({"DRV-NPU-004"}))
    return run_audit(load_registry(entry_points=False), ctx, sel).result("DRV-NPU-004")


def test_drv_npu_004_does_not_pass_on_the_audits_mask_while_the_table_is_incomplete(
    tmp_path, release
):
    env = {**_busy_node(tmp_path), "ASCEND_RT_VISIBLE_DEVICES": "0,1"}
    host = StuckNode(str(tmp_path / "root"), env, release)
    del host.table[200]  # the only serving process is the one that hangs
    res = _audit_visible(host)
    assert res.status.value == "ERROR", res.summary
    assert f"process {SLOW} did not answer /proc/{SLOW}/cmdline" in res.summary
    release.set()
    done = StuckNode(str(tmp_path / "root"), env, release)
    del done.table[200]
    assert _audit_visible(done).status.value == "PASS"


def test_drv_npu_004_skip_names_the_unread_process(tmp_path, release):
    host = StuckNode(str(tmp_path / "root"), _busy_node(tmp_path), release)
    res = _audit_visible(host)
    assert res.status.value == "SKIP" and "process table incomplete" in res.summary, res.summary


def test_no_interpreter_to_probe_names_the_processes_the_scan_missed(tmp_path, release):
    host = StuckNode(str(tmp_path / "root"), _busy_node(tmp_path), release)
    del host.table[200]  # the only serving process may be the one that hung
    ctx = Context(host, parse_policy(""))
    sel = Selection(only=frozenset({"FWK-STACK-001"}), layers=("framework",), gate=False)
    res = run_audit(load_registry(entry_points=False), ctx, sel).result("FWK-STACK-001")
    assert res.status.value == "SKIP", res.summary
    assert res.summary.startswith("no framework evidence: no running vLLM / MindIE process ")
    assert f"the process scan missed: process {SLOW} did not answer" in res.summary, res.summary


def test_a_log_without_stack_lines_and_a_missed_process_says_so_too(tmp_path, release):
    host = StuckNode(str(tmp_path / "root"), _busy_node(tmp_path), release)
    del host.table[200]
    log = tmp_path / "serve.log"
    log.write_text(
        "INFO:     Started server process [123]\nINFO:     Waiting for application startup.\n"
    )
    ctx = Context(host, parse_policy(""), inputs=Inputs(serving_logs=(str(log),)))
    sel = Selection(only=frozenset({"FWK-STACK-001"}), layers=("framework",), gate=False)
    res = run_audit(load_registry(entry_points=False), ctx, sel).result("FWK-STACK-001")
    assert res.status.value == "SKIP", res.summary
    assert res.summary.startswith("no serving interpreter to probe"), res.summary
    assert f"the process scan missed: process {SLOW}" in res.summary, res.summary
