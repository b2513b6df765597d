"""Item 8: every bad input exits 2 naming it (before the audit where it can), Ctrl-C exits 130,
SIGTERM ends child process groups and removes unpacked snapshots; report.json is strict JSON."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hardening.helpers import REPO, audit_process, fake_node, script

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "atlas-800t-a2-ready"


def _dir_bundle(tmp: Path, manifest_text: str) -> Path:
    d = tmp / "bundle"
    shutil.copytree(EXAMPLE, d)
    (d / "manifest.json").write_text(manifest_text, encoding="utf-8")
    return d


def _bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    damaged = tmp / "damaged.tar.gz"
    damaged.write_bytes(gzip.compress(b"ustar" * 5000)[:3000])
    deep = _dir_bundle(tmp / "d1", "[" * 200_000 + "]" * 200_000)
    manifest = json.loads((EXAMPLE / "manifest.json").read_text())
    manifest["identity"]["hostname"] = "\ud800"
    lone = _dir_bundle(tmp / "d2", json.dumps(manifest))  # JSON's own \ud800 escape
    report_deep = tmp / "deep.json"
    report_deep.write_text("{" + '"a":{' * 100_000 + "}" * 100_001)
    report_lone = tmp / "lone.json"
    report_lone.write_text('{"verdict": "\\udc80", "results": []}')
    return [
        (["run", "--snapshot", str(damaged)], str(damaged)),
        (["run", "--snapshot", str(deep)], "nested too deeply"),
        (["run", "--snapshot", str(lone)], "lone surrogate"),
        (["render", str(report_deep), "--html", str(tmp / "x.html")], str(report_deep)),
        (["diff", str(report_lone), str(report_lone)], str(report_lone)),
        (["run", "--trace", str(tmp / "no-such-trace")], "no-such-trace"),
        (["run", "--example", "atlas-800t-a2-ready", "-o", "/etc/hostname/out"], "/etc/hostname"),
        (["run", "--example", "atlas-800t-a2-ready", "--json", str(tmp)], str(tmp)),
        (["collect", "--sysroot", str(tmp), "-o", "/proc/version/b.tar.gz"], "/proc/version"),
    ]


def test_bad_inputs_exit_2_naming_them(tmp_path):
    for args, named in _bad_inputs(tmp_path):
        res = audit_process(*args)
        assert res.returncode == 2, (args, res.returncode, res.stderr[-600:])
        assert named in res.stderr, (args, res.stderr[-600:])
        assert "Traceback" not in res.stderr


def test_an_unwritable_output_is_refused_before_the_audit_starts(tmp_path):
    root, bindir, env = fake_node(tmp_path)
    marker = tmp_path / "npu-smi-ran"
    script(bindir, "npu-smi", f"touch {marker}")
    res = audit_process("run", "--sysroot", str(root), "-o", "/etc/hostname/reports", env=env)
    assert res.returncode == 2 and "/etc/hostname" in res.stderr
    assert not marker.exists(), "the audit ran before the output was checked"


def _hung_node(tmp: Path) -> tuple[Path, dict, Path]:
    root, bindir, env = fake_node(tmp)
    pids = tmp / "pids"
    pids.mkdir()
    # npu-smi that starts a grandchild and hangs: both must die with the audit
    script(bindir, "npu-smi", f"sleep 600 & echo $! > {pids}/child-$$; echo $$ > {pids}/$$; wait")
    return root, env, pids


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split()[2] != "Z"


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_ends_child_process_groups_and_removes_snapshots(tmp_path, sig, code):
    root, env, pids = _hung_node(tmp_path)
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = dict(env, PYTHONPATH=str(REPO), TMPDIR=str(tmpdir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_audit", "run", "--sysroot", str(root), "--timeout", "300"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    try:
        deadline = time.monotonic() + 60
        while not list(pids.glob("child-*")) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert list(pids.glob("child-*")), "npu-smi never started"
        time.sleep(0.3)
        proc.send_signal(sig)
        assert proc.wait(20) == code, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.3)
        left = [int(p.read_text()) for p in pids.iterdir() if _alive(int(p.read_text()))]
        assert left == [], f"processes left running: {left}"
    finally:  # whatever happened, leave nothing running
        proc.kill()
        proc.wait()
        for p in pids.iterdir():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(p.read_text()), signal.SIGKILL)


def test_sigterm_during_a_snapshot_replay_removes_the_unpacked_copy(tmp_path):
    bundle = tmp_path / "node.tar.gz"
    made = audit_process(
        "run", "--example", "atlas-800t-a2-ready", "--json", str(tmp_path / "r.json")
    )
    assert made.returncode == 0
    shutil.make_archive(str(bundle)[: -len(".tar.gz")], "gztar", EXAMPLE)
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "slow.py").write_text(
        "import time\n"
        "from ascend_audit.registry import check\n"
        "from ascend_audit.model import passed\n"
        "@check('SITE-SLOW-001', layer='driver', title='slow', severity='low')\n"
        "def slow(ctx):\n"
        "    open(__file__ + '.started', 'w').close()\n"
        "    time.sleep(600)\n"
        "    return passed('never')\n"
    )
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmpdir))
    argv = [sys.executable, "-m", "ascend_audit", "run", "--snapshot", str(bundle)]
    proc = subprocess.Popen(
        [*argv, "--checks-dir", str(checks)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=str(REPO),
    )
    deadline = time.monotonic() + 60
    while not (checks / "slow.py.started").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        assert list(tmpdir.iterdir()), "the bundle was unpacked into TMPDIR"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 143
        assert list(tmpdir.iterdir()) == [], "the unpacked snapshot was left behind"
    finally:
        proc.kill()
        proc.wait()


def test_report_json_is_strict_json_even_with_nan_and_infinity(tmp_path):
    checks = tmp_path / "checks"
    checks.mkdir()
    (checks / "nan.py").write_text(
        "from ascend_audit.registry import check\n"
        "from ascend_audit.model import Outcome, Status\n"
        "@check('SITE-NAN-001', layer='driver', title='nan', severity='low')\n"
        "def nan(ctx):\n"
        "    return Outcome(Status.PASS, 'ratio', metrics={'r': float('nan'), 'i': float('inf')})\n"
    )
    out = tmp_path / "r.json"
    res = audit_process(
        "run", "--example", "atlas-800t-a2-ready", "--checks-dir", str(checks), "--json", str(out)
    )
    assert res.returncode in (0, 1), res.stderr[-600:]

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    report = json.loads(out.read_text(), parse_constant=refuse)
    r = next(x for x in report["results"] if x["id"] == "SITE-NAN-001")
    assert r["metrics"] == {"r": None, "i": None}


@pytest.fixture
def interrupted():
    """The audit process's state after Ctrl-C: no command may start (undone afterwards)."""
    from ascend_audit.host import live

    yield live
    live._STOPPING.clear()


def test_no_command_starts_once_the_audit_is_interrupted(interrupted):
    interrupted.kill_running_children()
    start = time.monotonic()
    res = interrupted.execute(["sleep", "30"], 30.0, env={"PATH": "/usr/bin:/bin"})
    assert time.monotonic() - start < 5
    assert res.status == "error" and "not started: the audit is being interrupted" in res.error


def test_a_command_started_while_the_kill_ran_is_killed_too(interrupted, monkeypatch):
    real_popen = subprocess.Popen

    def popen_then_interrupt(*args, **kwargs):
        proc = real_popen(*args, **kwargs)
        interrupted.kill_running_children()  # the kill lists the groups before this one is added
        return proc

    monkeypatch.setattr(interrupted.subprocess, "Popen", popen_then_interrupt)
    start = time.monotonic()
    res = interrupted.execute(["sleep", "30"], 30.0, env={"PATH": "/usr/bin:/bin"})
    assert time.monotonic() - start < 5, "the command started during the kill outlived it"
    assert res.status != "ok", res
