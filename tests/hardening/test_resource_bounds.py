"""Bounded memory: peak RSS of a whole audit does not grow with the size of a trace or a serving
log. Small versions of the benchmark (benchmarks/bench_bounds.py does 2 GB / 1 GB): two sizes per
reader, each audited in a child process whose own peak RSS (os.wait4 → ru_maxrss) is read; the
difference must stay under 30 MB (a reader that loads the file would grow by the size difference
at least). Both trace sizes of a pair stay on one side of ARROW_ABOVE_BYTES, so that the pair
compares one reader at two sizes, not the stdlib reader with pyarrow's ~100 MB of libraries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hardening.helpers import DATA, PY, REPO

from ascend_audit.facts.profiler.kernels import ARROW_ABOVE_BYTES

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


SIZES_MB = {"trace-stdlib": (4, 30), "trace-pyarrow": (40, 120), "serving-log": (20, 80)}


def test_trace_pairs_stay_on_one_reader():
    small, large = SIZES_MB["trace-stdlib"]
    assert large * MB < ARROW_ABOVE_BYTES
    small, large = SIZES_MB["trace-pyarrow"]
    assert small * MB * 0.9 > ARROW_ABOVE_BYTES


@pytest.mark.parametrize("kind", sorted(SIZES_MB))
def test_peak_rss_does_not_grow_with_input_size(tmp_path, kind):
    peaks = {}
    small, large = SIZES_MB[kind]
    for mb in (small, large):
        if kind.startswith("trace"):
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
    growth = peaks[large] - peaks[small]
    assert growth < BOUND_MB, (
        f"{kind}: peak RSS {peaks[small]:.0f} MB at {small} MB, {peaks[large]:.0f} MB at {large} MB"
    )
