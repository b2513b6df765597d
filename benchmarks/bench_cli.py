"""CLI speed: --help and checks (no pandas/torch), a full run on an example, a concurrent live run.

Usage: python benchmarks/bench_cli.py [--runs 7]
Prints the median of several runs of each case, with its target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fakes"))

from fakenode import atlas_800_a2, npu_smi_outputs  # noqa: E402

# npu-smi is asked 18 questions on an 8-NPU node: `info` and `-t topo` together, then `-t board`
# and `-t health` for every NPU the table lists (they depend on its ids), all concurrently.

CLI = [sys.executable, "-m", "ascend_audit"]


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, env=env, check=False, timeout=120)
    return time.perf_counter() - start


def median_of(runs: int, argv: list[str], env: dict[str, str] | None = None) -> float:
    timed(argv, env)  # warm the page cache and .pyc files
    return statistics.median(timed(argv, env) for _ in range(runs))


def heavy_imports(args: list[str]) -> list[str]:
    """Heavy modules imported by `ascend-audit ARGS` (checked with -X importtime)."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ascend_audit", *args],
        capture_output=True,
        text=True,
        check=False,
    )
    names = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines()}
    return sorted(n for n in names if n.split(".")[0] in {"pandas", "torch", "pyarrow", "numpy"})


def slow_node(root: Path, delay: float) -> tuple[Path, dict[str, str]]:
    """A fake 8-NPU node whose npu-smi (a shell script) answers each question after `delay` s."""
    bindir, answers = root / "bin", root / "answers"
    answers.mkdir(parents=True)
    cases = []
    for i, (key, text) in enumerate(npu_smi_outputs(atlas_800_a2()).items()):
        (answers / f"{i}.txt").write_text(text)
        cases.append(f'  "{key}") sleep {delay}; cat "{answers}/{i}.txt" ;;')
    bindir.mkdir()
    script = bindir / "npu-smi"
    script.write_text('#!/bin/sh\ncase "$*" in\n' + "\n".join(cases) + "\n  *) exit 2 ;;\nesac\n")
    script.chmod(0o755)
    sysroot = root / "sysroot"
    (sysroot / "dev").mkdir(parents=True)
    for i in range(8):
        (sysroot / "dev" / f"davinci{i}").write_text("")
    return sysroot, dict(os.environ, PATH=f"{bindir}:/usr/bin:/bin")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rows = []
    rows.append(("ascend-audit --help", median_of(args.runs, [*CLI, "--help"]), 0.3))
    rows.append(("ascend-audit checks", median_of(args.runs, [*CLI, "checks"]), 0.3))
    example = [*CLI, "run", "--example", "atlas-800t-a2-ready", "-q"]
    rows.append(("run --example atlas-800t-a2-ready", median_of(args.runs, example), 1.0))
    with tempfile.TemporaryDirectory() as tmp:
        sysroot, env = slow_node(Path(tmp), 0.5)
        live = [*CLI, "run", "--sysroot", str(sysroot), "--layers", "driver", "-q"]
        rows.append(
            ("live run, npu-smi stand-ins sleeping 0.5 s each", median_of(3, live, env), 1.5)
        )
    print(f"{'case':<52} {'median s':>9} {'target s':>9}")
    for name, value, target in rows:
        mark = "ok" if value <= target else "OVER"
        print(f"{name:<52} {value:>9.3f} {target:>9.1f}  {mark}")
    for cmd in (["--help"], ["checks"]):
        heavy = heavy_imports(cmd)
        print(f"heavy imports for `ascend-audit {' '.join(cmd)}`: {', '.join(heavy) or 'none'}")


if __name__ == "__main__":
    main()
