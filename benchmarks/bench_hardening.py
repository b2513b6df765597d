"""Hardening figures: wall time of a live audit with 64 hung NPUs, peak RSS of each bundle bomb.

    python benchmarks/bench_hardening.py [--timeout 1] [--dir /tmp/benchhard]

Reuses the bomb builders and the fake node of tests/hardening (the same data the tests refuse);
each audit runs as a child process whose own peak RSS is read with os.wait4.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "hardening"), str(REPO)]

from fakenode import FakeNpu, npu_smi_outputs  # noqa: E402
from hardening import test_bounded_bombs as bombs  # noqa: E402
from hardening.helpers import fake_node  # noqa: E402


def child(args: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of `python -m ascend_audit ARGS`."""
    env = dict(env or os.environ, PYTHONPATH=str(REPO))
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ascend_audit", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=str(REPO),
    )
    _, status, usage = os.wait4(proc.pid, 0)
    return time.monotonic() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--timeout", type=float, default=1.0)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    work = Path(a.dir or tempfile.mkdtemp(prefix="bench-hardening-"))
    work.mkdir(parents=True, exist_ok=True)

    npus = [FakeNpu(i, f"0000:{0x10 + i:02X}:00.0") for i in range(64)]
    answers = {"info": npu_smi_outputs(npus)["info"], "*": {"sleep": 600}}
    node = work / "hung64"
    node.mkdir(exist_ok=True)
    root, _bindir, env = fake_node(node, answers)
    wall, rss, rc = child(["run", "--sysroot", str(root), "--timeout", str(a.timeout)], env)
    bound = 3 * a.timeout + 5
    print(
        f"| 64 hung NPUs, --timeout {a.timeout:g} | {wall:.1f} s (bound {bound:g} s) "
        f"| {rss:.0f} MB | exit {rc} |"
    )

    for name, build in (
        ("GNU long name, 256 MiB declared", bombs._long_name_bomb),
        ("PAX header, 256 MiB declared", bombs._pax_bomb),
        ("100,001 members", bombs._many_members),
        ("two manifest.json members", bombs._two_manifests),
    ):
        d = work / build.__name__.strip("_")
        d.mkdir(exist_ok=True)
        bomb = build(d)
        wall, rss, rc = child(["run", "--snapshot", str(bomb)])
        print(
            f"| bundle bomb: {name} ({bomb.stat().st_size / 2**20:.1f} MiB packed) "
            f"| {wall:.1f} s | {rss:.0f} MB | exit {rc} |"
        )

    trace = work / "csv" / "big_ascend_pt" / "ASCEND_PROFILER_OUTPUT"
    trace.mkdir(parents=True, exist_ok=True)
    with (trace / "kernel_details.csv").open("wb") as fh:
        fh.write(b"Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us)\n")
        for chunk in bombs._zeros(bombs.BOMB):
            fh.write(chunk.replace(b"\0", b"A"))
    wall, rss, rc = child(
        [
            "run",
            "--sysroot",
            str(work),
            "--layers",
            "operator",
            "--no-gate",
            "--trace",
            str(trace.parent),
        ]
    )
    print(f"| single-line CSV, 256 MiB, no newline | {wall:.1f} s | {rss:.0f} MB | exit {rc} |")


if __name__ == "__main__":
    main()
