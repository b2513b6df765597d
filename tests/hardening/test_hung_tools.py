"""Hung and hostile node tools: a stand-in `npu-smi` (and `hccn_tool`) that never exits, prints
gigabytes, prints binary, dies by a signal or leaves a child holding the pipe. Each ends within its
timeout, output is capped (and the result says so), no process is left behind, and a driver-layer
audit finishes in bounded wall time with a FAIL or ERROR saying what happened."""

from __future__ import annotations

import json
import os
import time
import uuid

import pytest
from hardening.helpers import audit_process, fake_node, no_traceback, script

from ascend_audit.host.live import execute

# Each body gets a unique marker so the test can look for leftover processes.
HOSTILE = {
    "hang": "exec sleep {marker}",
    "flood": "exec yes ascend-audit-flood",
    "binary": "head -c 300000 /dev/urandom; exit 0",
    "segv": "echo 'partial output'; kill -SEGV $$",
    "forked_child": "sleep {marker} & echo 'parent done'; exit 0",
    "forked_child_flood": "(yes child-flood) & sleep {marker}",
}


def _marker() -> str:
    # A float seconds value no other process uses; `sleep` accepts it.
    return f"{1000 + uuid.uuid4().int % 100000}.{uuid.uuid4().int % 997}"


def _leftovers(marker: str) -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd:
            pids.append(int(pid))
    return pids


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_execute_bounds_every_hostile_tool(tmp_path, kind):
    marker = _marker()
    exe = script(tmp_path, "npu-smi", HOSTILE[kind].format(marker=marker))
    cap = 1 << 20
    start = time.monotonic()
    res = execute([str(exe), "info"], timeout=2.0, cap=cap)
    wall = time.monotonic() - start
    assert wall < 6.0, f"{kind}: took {wall:.1f} s with a 2 s timeout"
    assert len(res.stdout.encode("utf-8", "replace")) <= 4 * cap  # replacement chars may grow it
    assert len(res.stderr) <= 4 * cap
    time.sleep(0.2)
    assert not _leftovers(marker), f"{kind}: processes left behind"
    if kind == "hang":
        assert res.status == "timeout" and "killed after 2 s" in res.error
    elif kind in ("flood", "forked_child_flood"):
        assert res.truncated and res.status == "error" and "output exceeded" in res.error
    elif kind == "segv":
        assert res.status == "signal" and res.error == "signal 11"
        assert "partial output" in res.stdout
    elif kind == "binary":
        assert res.status == "ok" and "\ufffd" in res.stdout  # decoded leniently, not a crash
    elif kind == "forked_child":
        # the parent exited 0 but its child kept the pipe: the group is killed, output kept
        assert "parent done" in res.stdout and res.status in ("ok", "timeout")


def _driver_audit(tmp_path, body: str, extra_tools: dict[str, str] | None = None):
    root, bindir, env = fake_node(tmp_path, answers={})
    script(bindir, "npu-smi", body)
    for name, text in (extra_tools or {}).items():
        script(bindir, name, text)
    out = tmp_path / "r.json"
    start = time.monotonic()
    proc = audit_process(
        "run",
        "--sysroot",
        str(root),
        "--layers",
        "driver",
        "--timeout",
        "2",
        "--json",
        str(out),
        env=env,
        timeout=300,
    )
    wall = time.monotonic() - start
    no_traceback(proc)
    assert out.is_file(), proc.stdout + proc.stderr
    return json.loads(out.read_text()), proc, wall


def _npu_results(report):
    return {r["id"]: r for r in report["results"] if r["id"].startswith("DRV-NPU-")}


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("hang", ("timed out", "timeout", "killed after")),
        ("flood", ("output exceeded", "truncated", "capped")),
        ("segv", ("signal 11", "signal")),
        ("forked_child_flood", ("output exceeded", "truncated", "capped")),
    ],
)
def test_driver_audit_with_hostile_npu_smi_finishes_and_says_why(tmp_path, kind, words):
    marker = _marker()
    report, proc, wall = _driver_audit(tmp_path, HOSTILE[kind].format(marker=marker))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert wall < 90, f"audit took {wall:.0f} s with --timeout 2"
    npu = _npu_results(report)
    assert npu["DRV-NPU-001"]["status"] in ("FAIL", "ERROR")
    said = json.dumps(npu["DRV-NPU-001"]).lower()
    assert any(w in said for w in words), npu["DRV-NPU-001"]["summary"]
    assert any(w in proc.stdout.lower() for w in words), proc.stdout[-2000:]
    time.sleep(0.2)
    assert not _leftovers(marker)


def test_driver_audit_with_binary_npu_smi_is_a_fail_not_a_crash(tmp_path):
    report, proc, _wall = _driver_audit(tmp_path, HOSTILE["binary"])
    assert proc.returncode == 1
    assert _npu_results(report)["DRV-NPU-001"]["status"] in ("FAIL", "ERROR")


def test_hung_hccn_tool_is_bounded_too(tmp_path):
    """hccn_tool is read by the network checks (when this build has them); hung, it is bounded."""
    marker = _marker()
    hang = HOSTILE["hang"].format(marker=marker)
    report, _proc, wall = _driver_audit(tmp_path, hang, {"hccn_tool": hang})
    assert wall < 120, f"audit took {wall:.0f} s with --timeout 2"
    time.sleep(0.2)
    assert not _leftovers(marker)
    net = [r for r in report["results"] if r["id"].startswith("DRV-NET-")]
    for r in net:
        assert r["status"] in ("FAIL", "ERROR", "SKIP", "BLOCKED", "WARN"), r
