"""Shared helpers of the hardening tests: run the CLI, build a fake node, hash trees."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

from clirun import cli, cli_process
from fakenode import FakeNpu, npu_smi_outputs, npu_smi_topo
from standins import node_env, standin
from sysroot import NODE_CPUS, NPU_BDFS, healthy_910b_node

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
PY = sys.executable


def audit(
    *args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None, timeout=180
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in-process as `python -m ascend_audit ARGS` would, from the repository root."""
    return cli(*args, env=env, cwd=cwd or REPO, timeout=timeout)


def audit_process(
    *args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None, timeout=180
) -> subprocess.CompletedProcess[str]:
    """Run `python -m ascend_audit ARGS` as a child, where the process boundary is tested."""
    return cli_process(*args, env=env, cwd=cwd or REPO, timeout=timeout)


def smi_answers() -> dict[str, Any]:
    """npu-smi answers agreeing with healthy_910b_node's BDFs and NUMA cpulists."""
    npus = [FakeNpu(i, bdf.upper()) for i, bdf in enumerate(NPU_BDFS)]
    out: dict[str, Any] = dict(npu_smi_outputs(npus))
    out["info -t topo"] = npu_smi_topo(npus, tuple(NODE_CPUS[0 if i < 4 else 1] for i in range(8)))
    return out


def fake_node(tmp: Path, answers: dict[str, Any] | None = None) -> tuple[Path, Path, dict]:
    """A healthy 910B sysroot plus a stand-in npu-smi; returns (root, bindir, env)."""
    root, bindir = tmp / "root", tmp / "bin"
    healthy_910b_node(root)
    standin(bindir, "npu-smi", answers if answers is not None else smi_answers())
    return root, bindir, node_env(bindir)


def script(bindir: Path, name: str, body: str) -> Path:
    """A shell stand-in `name` on bindir with this body."""
    bindir.mkdir(parents=True, exist_ok=True)
    p = bindir / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(p.stat().st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    return p


def tree_state(root: Path) -> dict[str, tuple]:
    """Every entry under root: (kind, mode, sha256 or link target), for before/after equality."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", st.st_mode, os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as fh:
                    state[rel] = ("file", st.st_mode, hashlib.sha256(fh.read()).hexdigest())
            else:
                state[rel] = ("other", st.st_mode, None)
    return state


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]


def fuzz_settings(n: int = 80):
    """Moderate, deterministic hypothesis settings (no deadline: CI machines are slow)."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=n,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def every_output(tmp: Path) -> list[str]:
    """The CLI options that write every report format into TMP (r.html, r.xml, r.md, …)."""
    names = {"--html": "r.html", "--junit": "r.xml", "--markdown": "r.md"}
    names.update({"--prometheus": "r.prom", "--json": "r.json"})
    return [arg for opt, name in names.items() for arg in (opt, str(tmp / name))]
