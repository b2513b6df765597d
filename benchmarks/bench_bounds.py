"""Resource bounds: a ~2 GB kernel_details.csv and a ~1 GB serving log audited in bounded memory.

Each input is audited by `python -m ascend_audit run --layers ... -q` in a child process; wall
time around the child and its own peak RSS (os.wait4 -> ru_maxrss) are printed. Data is generated
into --dir (reused when already there: the 2 GB trace takes a minute or two to write).

    python benchmarks/bench_bounds.py --dir /tmp/bench_bounds                 # 2 GB + 1 GB
    python benchmarks/bench_bounds.py --dir /tmp/bb --trace-rows 900000 --log-mb 100   # quick

Bound checked: peak RSS <= --max-rss-mb (default 400 MB) for each run, whatever the input size.
Exit 1 when a run exceeds it or fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LOG_SEED = REPO / "tests" / "data" / "framework" / "vllm_ascend_v1_aclgraph_serve.log"
MB = 1024 * 1024


def gen_trace(d: Path, rows: int) -> Path:
    out = d / f"bounds_{rows}_ascend_pt"
    csv = out / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    if not csv.is_file():
        subprocess.run(
            [
                sys.executable,
                str(HERE / "gen_kernel_details.py"),
                "--rows",
                str(rows),
                "--layout",
                "2023",
                "-o",
                str(out),
            ],
            check=True,
        )
    return out


def gen_log(d: Path, mb: int) -> Path:
    p = d / f"serve_{mb}mb.log"
    if p.is_file() and p.stat().st_size >= mb * MB:
        return p
    lines = LOG_SEED.read_bytes().splitlines(keepends=True)
    head, loop = b"".join(lines[:20]), b"".join(lines[20:])
    with p.open("wb") as fh:
        fh.write(head)
        written = len(head)
        while written < mb * MB:
            fh.write(loop)
            written += len(loop)
    return p


def measure(args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_audit", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=str(REPO),
    )
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    return {
        "argv": "ascend-audit " + " ".join(args),
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": round(time.monotonic() - start, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "tail": out.strip().splitlines()[-3:],
    }


def size_of(p: Path) -> int:
    return (
        p.stat().st_size
        if p.is_file()
        else sum(f.stat().st_size for f in p.rglob("*") if f.is_file())
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True, help="where to generate / reuse the data")
    ap.add_argument("--trace-rows", type=int, default=9_000_000, help="~232 bytes a row")
    ap.add_argument("--log-mb", type=int, default=1024)
    ap.add_argument("--max-rss-mb", type=int, default=400)
    ns = ap.parse_args()
    ns.dir.mkdir(parents=True, exist_ok=True)
    trace, log = gen_trace(ns.dir, ns.trace_rows), gen_log(ns.dir, ns.log_mb)
    runs = [
        ("trace", trace, ["run", "--layers", "operator", "--trace", str(trace), "-q"]),
        ("serving log", log, ["run", "--layers", "framework", "--serving-log", str(log), "-q"]),
    ]
    print(
        f"# {time.strftime('%Y-%m-%d')} {platform.machine()} {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load avg {os.getloadavg()[0]:.1f}"
    )
    bad = 0
    for name, path, args in runs:
        r = measure(args)
        r["input"], r["input_mb"] = name, round(size_of(path) / MB)
        print(json.dumps(r))
        if r["exit"] not in (0, 1) or r["peak_rss_mb"] > ns.max_rss_mb:
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
