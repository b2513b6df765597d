"""Tests for the framework probe script (run for real) and the parser of its output."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ascend_audit.facts.probe import (
    PROBE_ENV,
    PROBE_MARK,
    PROBE_PACKAGES,
    PROBE_SCRIPT,
    classify_import_error,
    parse_probe_output,
)


def run_probe(*extra: str, exe: str = sys.executable) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, **PROBE_ENV)
    return subprocess.run(
        [exe, "-I", "-c", PROBE_SCRIPT, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


@pytest.mark.parametrize("deep", [False, True])
def test_probe_runs_in_this_interpreter(deep: bool) -> None:
    r = run_probe(*(["--deep"] if deep else []))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(PROBE_MARK) and r.stdout.count("\n") == 1
    raw = json.loads(r.stdout[len(PROBE_MARK) :])
    assert raw["deep"] is deep
    assert set(raw["packages"]) == set(PROBE_PACKAGES)
    f = parse_probe_output(r.stdout, r.stderr, r.returncode, False)
    assert f.ran and f.problems == ()
    assert f.python_version == ".".join(map(str, sys.version_info[:3]))
    assert f.executable == sys.executable
    assert f.machine
    try:
        import torch_npu  # noqa: F401
    except ImportError:
        assert f.torch_npu_status == "not_installed"
        assert f.package("torch_npu") is None
        assert "torch_npu" in (f.import_error or "") or "torch" in (f.import_error or "")
    else:  # pragma: no cover - only on an Ascend node
        assert f.torch_npu_status in ("ok", "cann_missing")
    json.dumps(f.to_dict())


def test_probe_script_is_python38_syntax() -> None:
    import ast

    ast.parse(PROBE_SCRIPT, feature_version=(3, 8))


def test_probe_survives_noise_on_stdout() -> None:
    out = (
        "Warning: something printed\n" + PROBE_MARK + json.dumps({"torch_npu": {"imported": True}})
    )
    f = parse_probe_output(out + "\n", "", 0, False)
    assert f.ran and f.torch_npu_status == "ok"


@pytest.mark.parametrize(
    ("message", "status", "lib"),
    [
        (
            "ImportError: libhccl.so: cannot open shared object file: No such file or directory. "
            "Please check that the cann package is installed. "
            "Please run 'source set_env.sh' in the "
            "CANN installation path.",
            "cann_missing",
            "libhccl.so",
        ),
        (
            "ImportError: libascendcl.so: cannot open shared object file",
            "cann_missing",
            "libascendcl.so",
        ),
        (
            "RuntimeError: Failed to load the backend extension: torch_npu. <- ImportError: "
            "libascend_hal.so: cannot open shared object file: No such file or directory",
            "cann_missing",
            "libascend_hal.so",
        ),
        ("ImportError: libatb.so: cannot open shared object file", "cann_missing", "libatb.so"),
        (
            "ImportError: /x/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3c10",
            "torch_mismatch",
            None,
        ),
        (
            "RuntimeError: Two accelerators cannot be used at the same time in PyTorch: "
            "npu and cuda.",
            "cuda_torch",
            None,
        ),
        ("ModuleNotFoundError: No module named 'torch_npu'", "not_installed", None),
        ("ModuleNotFoundError: No module named 'torch'", "not_installed", None),
        ("ModuleNotFoundError: No module named 'yaml'", "other", None),
        ("ImportError: libtbe_adapter.so: undefined symbol: foo", "other", None),
        ("", "other", None),
    ],
)
def test_classify(message: str, status: str, lib: str | None) -> None:
    assert classify_import_error(message) == (status, lib)


def test_parse_failure_reports() -> None:
    payload = {
        "python": {"version": "3.11.6", "executable": "/usr/bin/python3", "machine": "aarch64"},
        "packages": {"torch": "2.9.0", "torch_npu": "2.9.0.post2", "vllm": "0.18.0"},
        "torch": {"imported": True, "version": "2.9.0", "cuda": None},
        "torch_npu": {
            "imported": False,
            "error_type": "ImportError",
            "error": "ImportError: libhccl.so: cannot open shared object file",
        },
        "vllm_ascend_build": {"device_type": "A2", "soc_version": "ascend910b1"},
    }
    f = parse_probe_output(PROBE_MARK + json.dumps(payload), "", 0, False)
    assert f.torch_npu_status == "cann_missing" and f.missing_library == "libhccl.so"
    assert f.package("torch_npu") == "2.9.0.post2" and f.package("vllm_ascend") is None
    assert (f.build_device_type, f.build_soc_version) == ("A2", "ascend910b1")
    assert f.machine == "aarch64"


def test_parse_deep_output() -> None:
    payload = {
        "deep": True,
        "torch_npu": {"imported": True, "version": "2.9.0.post2"},
        "npu": {
            "is_available": True,
            "device_count": 2,
            "device_names": ["Ascend910B3", None],
            "mem_get_info": [[60000000000, 65536000000], "bad"],
            "mem_get_info_error": "RuntimeError: boom",
            "cann_version": "9.0.0",
        },
    }
    f = parse_probe_output(json.dumps(payload).encode(), b"", 0, False)
    assert f.deep and f.device_count == 2 and f.is_available is True
    assert f.device_names == ("Ascend910B3", None)
    assert f.mem_info == ((60000000000, 65536000000), None)
    assert f.cann_version == "9.0.0"
    assert any("mem_get_info" in p for p in f.problems)


@pytest.mark.parametrize(
    ("stdout", "stderr", "rc", "timed_out", "needle"),
    [
        ("", "", None, True, "timed out"),
        ("", '  File "<string>", line 3\nSyntaxError: invalid syntax', 1, False, "older than 3.8"),
        ("", "sh: 0: Illegal option -I", 2, False, "printed nothing"),
        ("\x00\xff garbage {not json", "", 0, False, "no JSON"),
        (PROBE_MARK + "{truncated", "", 0, False, "no JSON"),
        (PROBE_MARK + "[1, 2]", "", 0, False, "no JSON"),
        (None, None, "x", False, "printed nothing"),
    ],
)
def test_parse_hostile(stdout, stderr, rc, timed_out, needle) -> None:
    f = parse_probe_output(stdout, stderr, rc, timed_out)
    assert not f.ran and f.torch_npu_status == "unknown"
    assert any(needle in p for p in f.problems), f.problems


def test_nonzero_exit_with_json_is_noted() -> None:
    f = parse_probe_output(PROBE_MARK + json.dumps({"torch_npu": {"imported": True}}), "", 3, False)
    assert f.ran and any("status 3" in p for p in f.problems)
