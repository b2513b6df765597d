"""Bounded memory: peak RSS of a whole audit does not grow with the size of a trace or a serving
log. Small versions of the benchmark (benchmarks/bench_bounds.py does 2 GB / 1 GB): 20 MB and
80 MB inputs, each audited in a child process whose own peak RSS (os.wait4 → ru_maxrss) is read;
the difference must stay under 30 MB (a reader that loads the file would grow by ~60 MB+)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hardening.helpers import DATA, PY, REPO

MB = 1024 * 1024
BOUND_MB = 30


def _peak_rss_mb(args: list[str]) -> tuple[float, int, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [PY, "-m", "ascend_audit", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=str(REPO),
    )
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, proc.returncode, out


def _trace(dirpath: Path, mb: int) -> Path:
    rows = int(mb * MB / 232)  # ~232 bytes a row in the 2023 layout
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "gen_kernel_details.py"),
            "--rows",
            str(rows),
            "--layout",
            "2023",
            "-o",
            str(dirpath / f"t{mb}_ascend_pt"),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return dirpath / f"t{mb}_ascend_pt"


def _log(dirpath: Path, mb: int) -> Path:
    base = (DATA / "framework" / "vllm_ascend_v1_aclgraph_serve.log").read_bytes()
    lines = base.splitlines(keepends=True)
    head, loop = b"".join(lines[:20]), b"".join(lines[20:]) or base
    p = dirpath / f"serve{mb}.log"
    with p.open("wb") as fh:
        fh.write(head)
        written = len(head)
        while written < mb * MB:
            fh.write(loop)
            written += len(loop)
    return p


@pytest.mark.parametrize("kind", ["trace", "serving-log"])
def test_peak_rss_does_not_grow_with_input_size(tmp_path, kind):
    peaks = {}
    for mb in (20, 80):
        if kind == "trace":
            path = _trace(tmp_path, mb)
            args = ["run", "--layers", "operator", "--trace", str(path), "-q"]
        else:
            path = _log(tmp_path, mb)
            args = ["run", "--layers", "framework", "--serving-log", str(path), "-q"]
        size = sum(f.stat().st_size for f in ([path] if path.is_file() else path.rglob("*")))
        assert size >= mb * MB * 0.9, f"generated input is only {size / MB:.0f} MB"
        peak, rc, out = _peak_rss_mb(args)
        assert rc in (0, 1), out[-2000:]
        assert "Traceback" not in out
        peaks[mb] = peak
    growth = peaks[80] - peaks[20]
    assert growth < BOUND_MB, (
        f"{kind}: peak RSS {peaks[20]:.0f} MB at 20 MB, {peaks[80]:.0f} MB at 80 MB"
    )
