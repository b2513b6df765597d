"""The read-only promise: a full audit (all layers, a trace, a serving log and config) of a fake
node leaves the sysroot, the inputs and HOME byte-identical (every file's sha256, mode and symlink
target), and writes nothing but the requested outputs in its working directory and TMPDIR.

When `unshare -rm` works (user + mount namespace), the sysroot, inputs and HOME are additionally
bind-mounted read-only for the run, so any attempted write fails loudly instead of only being
detected afterwards. Where the sandbox forbids namespaces the hash comparison alone is the proof
(the test says which mode it ran in via its `mode` parameter being skipped with a reason)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hardening.helpers import DATA, PY, REPO, fake_node, no_traceback, tree_state


def _unshare_works() -> bool:
    if not shutil.which("unshare") or not shutil.which("mount"):
        return False
    probe = subprocess.run(
        [
            "unshare",
            "-rm",
            "sh",
            "-c",
            "mount --bind -o ro / / 2>/dev/null || "
            "mount --bind -o ro /tmp /tmp && ! touch /tmp/.ascend-audit-ro-probe 2>/dev/null",
        ],
        capture_output=True,
        timeout=20,
    )
    return probe.returncode == 0


def _setup(tmp: Path):
    root, bindir, env = fake_node(tmp)
    inputs = tmp / "inputs"
    inputs.mkdir()
    shutil.copyfile(DATA / "framework" / "vllm_ascend_v1_aclgraph_serve.log", inputs / "serve.log")
    shutil.copyfile(DATA / "framework" / "vllm_serve_config.yaml", inputs / "serve.yaml")
    shutil.copytree(DATA / "traces" / "few_aicpu", inputs / "trace")
    os.symlink("serve.log", inputs / "latest.log")
    home = tmp / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".bashrc").write_text("# user's file\n")
    work, tmpdir = tmp / "work", tmp / "tmpdir"
    work.mkdir()
    tmpdir.mkdir()
    env.update(
        HOME=str(home),
        TMPDIR=str(tmpdir),
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONPATH=str(REPO),
        XDG_CACHE_HOME=str(home / ".cache"),
    )
    return root, bindir, inputs, home, work, tmpdir, env


def _audit_argv(root: Path, inputs: Path) -> list[str]:
    return [
        PY,
        "-m",
        "ascend_audit",
        "run",
        "--sysroot",
        str(root),
        "--no-gate",
        "--trace",
        str(inputs / "trace"),
        "--serving-log",
        str(inputs / "latest.log"),
        "--serving-config",
        str(inputs / "serve.yaml"),
        "--json",
        "report.json",
        "--html",
        "report.html",
        "--junit",
        "junit.xml",
        "--markdown",
        "summary.md",
        "--prometheus",
        "metrics.prom",
    ]


@pytest.mark.parametrize("mode", ["ro-mounts", "hash-only"])
def test_full_audit_changes_nothing_and_writes_only_its_outputs(tmp_path, mode):
    if mode == "ro-mounts" and not _unshare_works():
        pytest.skip("unshare -rm / mount --bind -o ro not permitted here; hash-only mode covers it")
    root, bindir, inputs, home, work, tmpdir, env = _setup(tmp_path)
    watched = {"sysroot": root, "inputs": inputs, "home": home, "bin": bindir}
    before = {k: tree_state(v) for k, v in watched.items()}
    argv = _audit_argv(root, inputs)
    if mode == "ro-mounts":
        mounts = " && ".join(f"mount --bind -o ro {p} {p}" for p in (root, inputs, home, bindir))
        # prove the mounts are really read-only before trusting them
        argv = [
            "unshare",
            "-rm",
            "sh",
            "-c",
            f'{mounts} && ! touch {root}/.w 2>/dev/null && exec "$@"',
            "sh",
            *argv,
        ]
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=300)
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    for name, path in watched.items():
        assert tree_state(path) == before[name], f"the audit changed {name}"
    assert sorted(os.listdir(work)) == sorted(
        ["report.json", "report.html", "junit.xml", "summary.md", "metrics.prom"]
    )
    assert os.listdir(tmpdir) == [], "temp files left behind"
    assert "Read-only file system" not in proc.stdout + proc.stderr


def test_collect_writes_only_the_bundle(tmp_path):
    root, _bindir, inputs, home, work, tmpdir, env = _setup(tmp_path)
    before = {p: tree_state(p) for p in (root, inputs, home)}
    proc = subprocess.run(
        [
            PY,
            "-m",
            "ascend_audit",
            "collect",
            "--sysroot",
            str(root),
            "--serving-log",
            str(inputs / "serve.log"),
            "-o",
            "node.tar.gz",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    no_traceback(proc)
    assert proc.returncode in (0, 1), proc.stderr
    assert os.listdir(work) == ["node.tar.gz"]
    assert os.listdir(tmpdir) == []
    for p, state in before.items():
        assert tree_state(p) == state
