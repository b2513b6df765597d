"""Time the whole operator layer (`ascend-audit run --layers operator --trace DIR -q`) and,
when installed, `msprof-analyze advisor computation` on the same generated profile.

Each measurement is one child process; wall time is measured around it, CPU time (user+sys)
and peak RSS are the child's own (os.wait4), so the numbers cover interpreter start-up and
imports. With several --root checkouts the runs alternate between them. Bytecode is cached (in
a private PYTHONPYCACHEPREFIX, after one untimed warm-up run), as it is for an installed package
and for the peer: with PYTHONDONTWRITEBYTECODE set, every run would also compile ascend-audit's
~300 modules. The load average is printed with each figure.

    python benchmarks/bench_operator.py --rows 1000000 --layout 2023 [--runs 3] [--peer]
    python benchmarks/bench_operator.py --rows 100000 --root /tmp/before   # another checkout
    python benchmarks/bench_operator.py --trace tests/data/traces/few_aicpu --runs 5   # given
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from gen_kernel_details import generate  # noqa: E402


def measure(
    argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT
) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MB, exit status) of one child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env
    )
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f}"


def bench_ours(profile: Path, runs: int, roots: list[Path], base: Path) -> list[str]:
    """Median and minimum of RUNS runs of each checkout; the runs alternate between the
    checkouts, so a change in the machine's load falls on all of them alike."""
    argv = [sys.executable, "-m", "ascend_audit", "run", "--layers", "operator"]
    argv += ["--trace", str(profile), "-q"]
    envs = {}
    for root in roots:
        pycache = base / "pycache" / root.as_posix().strip("/").replace("/", "_")
        envs[root] = dict(os.environ, PYTHONPATH=str(root), PYTHONPYCACHEPREFIX=str(pycache))
        envs[root].pop("PYTHONDONTWRITEBYTECODE", None)
        measure(argv, envs[root], root)  # warm-up: writes the bytecode cache
    res: dict[Path, list[tuple[float, float, float, int]]] = {root: [] for root in roots}
    for _ in range(runs):
        for root in roots:
            res[root].append(measure(argv, envs[root], root))
    lines = []
    for root, got in res.items():
        wall, cpu, rss = ([r[i] for r in got] for i in range(3))
        lines.append(
            f"ascend-audit operator layer ({root}): median of {runs}: "
            f"wall={statistics.median(wall):.3f} s cpu={statistics.median(cpu):.3f} s "
            f"(min {min(wall):.3f} / {min(cpu):.3f}) peak_rss={statistics.median(rss):.0f} MB "
            f"exit={got[0][3]} ({_load()})"
        )
    return lines


def bench_peer(profile: Path) -> str:
    exe = shutil.which("msprof-analyze")
    if not exe:
        return "msprof-analyze: not installed (pip install msprof-analyze)"
    with tempfile.TemporaryDirectory(prefix="bench_msprof_") as out:
        env = dict(os.environ, TMPDIR=out)
        argv = [exe, "advisor", "computation", "-d", str(profile), "-l", "en", "-o", out]
        wall, cpu, rss, rc = measure(argv, env)
    return (
        f"msprof-analyze advisor computation: one run: wall={wall:.2f} s cpu={cpu:.2f} s "
        f"peak_rss={rss:.0f} MB exit={rc} ({_load()})"
    )


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--layout", choices=("2023", "2025"), default="2023")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--peer", action="store_true", help="also time msprof-analyze (one run)")
    ap.add_argument("--dir", type=Path, help="where to write the data (default: a temp dir)")
    ap.add_argument("--trace", type=Path, help="time this trace instead of a generated one")
    ap.add_argument(
        "--root", type=Path, action="append", help="checkout(s) to time (default: this)"
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_operator_") as tmp:
        base = args.dir or Path(tmp)
        if args.trace:
            profile = args.trace.resolve()
            print(f"trace {profile}")
        else:
            profile = base / f"kd_{args.layout}_{args.rows}_ascend_pt"
            csv_path = profile / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
            if not csv_path.is_file():
                generate(args.rows, args.layout, profile)
            size = csv_path.stat().st_size / 1e6
            print(f"layout={args.layout} rows={args.rows} size={size:.1f} MB ({profile})")
        roots = [root.resolve() for root in args.root or [ROOT]]
        for line in bench_ours(profile, args.runs, roots, base):
            print(line, flush=True)
        if args.peer:
            print(bench_peer(profile), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
