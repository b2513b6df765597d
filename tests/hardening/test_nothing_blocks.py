"""Item 4: a FIFO, socket or device where a file is expected is an error within a second."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from hardening.helpers import audit_process, fake_node

from ascend_audit.host.live import LiveHost
from ascend_audit.safe_io import NotRegularFile, open_regular


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _socket(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()
    return path


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_sysroot_read_of_a_special_file_is_an_error_at_once(tmp_path, kind):
    root = tmp_path / "root"
    planted = root / "etc" / "os-release"
    (_fifo if kind == "fifo" else _socket)(planted)
    t0 = time.monotonic()
    res = LiveHost(str(root)).read_text("/etc/os-release")
    assert time.monotonic() - t0 < 1.0
    assert res.text is None and "not a regular file" in (res.error or ""), res


def test_a_device_is_not_read_as_a_file(tmp_path):
    t0 = time.monotonic()
    with pytest.raises(NotRegularFile, match="character device"):
        open_regular("/dev/zero")  # would be endless
    with pytest.raises(NotRegularFile, match="FIFO"):
        open_regular(str(_fifo(tmp_path / "p")))
    assert time.monotonic() - t0 < 1.0


@pytest.mark.parametrize(
    "flag",
    [
        "--serving-log",
        "--serving-config",
        "--rank-table",
        "--bench-result",
        "--policy",
        "--weights-manifest",
        "--trace",
    ],
)
def test_special_file_given_as_an_input_is_a_usage_error(tmp_path, flag):
    fifo = _fifo(tmp_path / "input.fifo")
    root, _bindir, env = fake_node(tmp_path)
    t0 = time.monotonic()
    res = audit_process(
        "run", "--sysroot", str(root), "--layers", "driver", flag, str(fifo), env=env
    )
    assert res.returncode == 2, (res.returncode, res.stdout[-500:], res.stderr[-500:])
    assert str(fifo) in res.stderr and "FIFO" in res.stderr
    assert time.monotonic() - t0 < 20  # the process start; the refusal itself is a stat


@pytest.mark.parametrize("where", ["trace", "model"])
def test_special_files_inside_input_folders_do_not_block(tmp_path, where):
    folder = tmp_path / where
    if where == "trace":
        out = folder / "PROF_000001_20260101_aaaa" / "mindstudio_profiler_output"
        _fifo(out / "op_summary_20260101.csv")
        _fifo(out / "op_statistic_20260101.csv")
        args = ["--trace", str(folder), "--layers", "driver,operator", "--no-gate"]
    else:
        folder.mkdir()
        (folder / "config.json").write_text('{"model_type": "qwen2"}')
        _fifo(folder / "model-00001-of-00001.safetensors")
        _fifo(folder / "model.safetensors.index.json")
        args = ["--model-dir", str(folder), "--verify-weights", "--no-gate"]
    root, _bindir, env = fake_node(tmp_path)
    t0 = time.monotonic()
    res = audit_process("run", "--sysroot", str(root), *args, env=env, timeout=120)
    assert res.returncode in (0, 1), res.stderr[-800:]
    assert time.monotonic() - t0 < 60
    assert "Traceback" not in res.stderr
