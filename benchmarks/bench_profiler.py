"""Time summarize_kernels on a generated kernel_details.csv: wall time and peak RSS.

Each run is a fresh subprocess (peak RSS from resource.getrusage there); prints the median
of the runs.

    python benchmarks/bench_profiler.py --rows 1000000 --layout 2023 [--dir DIR] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from gen_kernel_details import generate  # noqa: E402

CHILD = r"""
import json, resource, sys, time
t0 = time.perf_counter()
from ascend_audit.facts.profiler import summarize_kernels
t1 = time.perf_counter()
s = summarize_kernels(sys.argv[1])
t2 = time.perf_counter()
print(json.dumps({
    "wall_s": t2 - t1,
    "wall_with_import_s": t2 - t0,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "rows": s.rows,
    "layout": s.layout,
    "problems": list(s.problems),
}))
"""


def run_once(csv_path: Path) -> dict:
    """One measurement in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(csv_path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    if out.returncode:
        raise SystemExit(f"benchmark child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--layout", choices=("2023", "2025"), default="2023")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, help="where to write the data (default: a temp dir)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_profiler_") as tmp:
        base = args.dir or Path(tmp)
        target = base / f"kd_{args.layout}_{args.rows}"
        csv_path = target / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
        if not csv_path.is_file():
            generate(args.rows, args.layout, target)
        size_mb = csv_path.stat().st_size / 1e6
        runs = [run_once(csv_path) for _ in range(args.runs)]
        wall = statistics.median(r["wall_s"] for r in runs)
        wall_imp = statistics.median(r["wall_with_import_s"] for r in runs)
        rss = statistics.median(r["peak_rss_mb"] for r in runs)
        print(
            f"layout={args.layout} rows={runs[0]['rows']} size={size_mb:.1f} MB "
            f"detected={runs[0]['layout']} median of {args.runs}: wall={wall:.2f} s "
            f"(with import {wall_imp:.2f} s) peak_rss={rss:.0f} MB"
        )
        if runs[0]["problems"]:
            print("problems:", runs[0]["problems"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
