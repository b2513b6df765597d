"""Live host: no shell, timeouts, missing commands, output caps, sysroot resolution."""

from __future__ import annotations

import os
import stat
import time

from ascend_audit.host.live import LiveHost, execute


def _script(directory, name, body):
    path = directory / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def _host(tmp_path, bindir, timeout=2.0):
    env = dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")
    return LiveHost(str(tmp_path), timeout=timeout, environ=env)


def test_missing_command_is_a_fact(tmp_path):
    res = _host(tmp_path, tmp_path).run(["npu-smi-does-not-exist", "info"])
    assert res.status == "missing" and "not found" in res.describe()


def test_nonzero_exit_keeps_output(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir, "npu-smi", "echo 'dcmi module initialize failed. ret is -8005' >&2; exit 255\n")
    res = _host(tmp_path, bindir).run(["npu-smi", "info"])
    assert res.status == "nonzero" and res.rc == 255
    assert "-8005" in res.stderr


def test_hung_command_ends_on_its_timeout(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir, "npu-smi", "sleep 30\n")
    start = time.monotonic()
    res = _host(tmp_path, bindir, timeout=0.5).run(["npu-smi", "info"])
    assert res.status == "timeout"
    assert time.monotonic() - start < 5
    assert "did not finish" in res.describe()


def test_child_holding_the_pipe_does_not_hang(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir, "forker", "(sleep 30 &) ; echo parent-done\n")
    start = time.monotonic()
    res = _host(tmp_path, bindir, timeout=1.0).run(["forker"])
    assert time.monotonic() - start < 5
    assert "parent-done" in res.stdout


def test_output_is_capped_and_says_so(tmp_path):
    res = execute(["sh", "-c", "yes ascend | head -c 3000000"], 10, cap=100_000)
    assert res.truncated
    assert len(res.stdout) <= 100_000
    assert "capped" in res.evidence().excerpt


def test_arguments_are_not_interpreted_by_a_shell(tmp_path):
    res = execute(["echo", "$(id)", ";", "rm", "-rf", "/"], 5)
    assert res.stdout.strip() == "$(id) ; rm -rf /"


def test_run_many_is_concurrent_and_cached(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for i in range(8):
        _script(bindir, f"slow{i}", "sleep 0.5; echo done\n")
    host = _host(tmp_path, bindir)
    start = time.monotonic()
    results = host.run_many([[f"slow{i}"] for i in range(8)])
    assert all(r.ok for r in results)
    assert time.monotonic() - start < 3.0  # 8 × 0.5 s in sequence would be 4 s
    again = time.monotonic()
    assert host.run(["slow0"]).ok and time.monotonic() - again < 0.2


def test_files_resolve_under_sysroot_and_links_stay_inside(tmp_path):
    (tmp_path / "sys/devices/x").mkdir(parents=True)
    (tmp_path / "sys/devices/x/vendor").write_text("0x19e5\n")
    (tmp_path / "sys/bus").mkdir()
    os.symlink("/sys/devices/x", tmp_path / "sys/bus/dev")  # absolute target, as on a real host
    host = LiveHost(str(tmp_path))
    assert host.read_text("/sys/bus/dev/vendor").text == "0x19e5\n"
    assert host.realpath("/sys/bus/dev") == "/sys/devices/x"
    assert host.read_text("/../../etc/shadow").text is None
    assert host.read_text("/nope").error
    assert host.listdir("/sys") == ["bus", "devices"]
