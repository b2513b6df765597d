"""Item 3: reads never leave --sysroot or a directory snapshot; collect --trace follows no link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hardening.helpers import audit, fake_node

from ascend_audit import safe_io
from ascend_audit.host.bundle import SnapshotError
from ascend_audit.host.live import LiveHost
from ascend_audit.host.snapshot import SnapshotHost

SECRET = "OUTSIDE-THE-SYSROOT-7f3a"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "atlas-800t-a2-ready"


@pytest.fixture(params=["openat2", "nofollow-walk"])
def resolver(request, monkeypatch):
    """Both resolvers: the kernel's RESOLVE_IN_ROOT and the O_NOFOLLOW walk."""
    if request.param == "openat2" and not safe_io._has_openat2():
        pytest.skip("this kernel has no openat2 (the walk is tested instead)")
    monkeypatch.setattr(safe_io, "_openat2_works", request.param == "openat2")
    return request.param


def _outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


def test_a_link_chain_past_the_hop_limit_fails_closed(tmp_path, resolver):
    secret = _outside(tmp_path)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    # 45 hops, the last one to the secret's absolute host path: a resolver that gives up at
    # its hop limit and lets the OS follow the rest would read the host's file
    (root / "l45").symlink_to(str(secret))
    for i in range(44, 0, -1):
        (root / f"l{i}").symlink_to(f"/l{i + 1}")
    (root / "etc" / "hostname").symlink_to("/l1")
    res = LiveHost(str(root)).read_text("/etc/hostname")
    assert res.text is None or SECRET not in res.text, "read a file outside the sysroot"
    assert res.error


@pytest.mark.parametrize(
    "target",
    ["ABS", "../../../../../../../../../../OUTSIDE", "/../../../../OUTSIDE"],
)
def test_links_resolve_inside_the_root(tmp_path, resolver, target):
    secret = _outside(tmp_path)
    root = tmp_path / "root"
    (root / "sys" / "class").mkdir(parents=True)
    link = str(secret) if target == "ABS" else target.replace("OUTSIDE", str(secret).lstrip("/"))
    (root / "sys" / "class" / "x").symlink_to(link)
    host = LiveHost(str(root))
    res = host.read_text("/sys/class/x")
    assert res.text is None and SECRET not in str(res)
    assert host.stat("/sys/class/x") is None  # not the outside file's stat either
    # the same target planted inside the root is what the link means on the node
    inside = root / str(secret).lstrip("/")
    inside.parent.mkdir(parents=True)
    inside.write_text("node's own file\n")
    assert host.read_text("/sys/class/x").text == "node's own file\n"


def test_directory_snapshot_refuses_a_symlinked_parent(tmp_path):
    outside = tmp_path / "outside-files"
    d = tmp_path / "dir"
    shutil.copytree(EXAMPLE, d)
    manifest = json.loads((d / "manifest.json").read_text())
    rel = next(f["content"] for f in manifest["files"].values() if f.get("content"))
    first = rel.split("/")[0]
    shutil.move(str(d / first), str(outside))  # the member's folder now lives outside
    (d / first).symlink_to(outside)
    with pytest.raises(SnapshotError, match="symbolic link"):
        SnapshotHost(str(d))


def test_collect_trace_follows_no_link_out_and_survives_loops(tmp_path):
    secret = _outside(tmp_path)
    trace = tmp_path / "trace_ascend_pt"
    (trace / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    (trace / "ASCEND_PROFILER_OUTPUT" / "op_statistic.csv").write_text("OP Type,Count\nMatMul,3\n")
    (trace / "leak.csv").symlink_to(secret)
    (trace / "leakdir").symlink_to(secret.parent)
    (trace / "loop").symlink_to(".")
    (trace / "a").symlink_to("b")
    (trace / "b").symlink_to("a")
    root, _bindir, env = fake_node(tmp_path)
    out = tmp_path / "bundle"
    res = audit("collect", "--sysroot", str(root), "--trace", str(trace), "-o", str(out), env=env)
    assert res.returncode in (0, 1), res.stderr
    held = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file() and not p.is_symlink())
    assert SECRET.encode() not in held, "collect copied a file from outside the trace"
    assert not [p for p in out.rglob("*") if p.is_symlink()]
    notes = json.loads((out / "manifest.json").read_text())["input_notes"][str(trace)]
    assert any("leak.csv: symbolic link" in n for n in notes), notes
    assert (os.path.getsize(next(out.rglob("op_statistic.csv")))) > 0


def test_collect_trace_follows_no_link_swapped_in_during_the_copy(tmp_path, monkeypatch):
    """A trace file replaced by a link to a secret after it was looked at (the serving user
    owns the trace and may race the copy) is not followed: files are opened from their
    directory's fd with O_NOFOLLOW, directories reached through the one above them."""
    from ascend_audit.host import recording

    secret = _outside(tmp_path)
    trace = tmp_path / "trace_ascend_pt"
    (trace / "sub").mkdir(parents=True)
    (trace / "kernel.csv").write_text("Name,Duration\nMatMul,3\n")
    (trace / "sub" / "op.csv").write_text("OP Type,Count\nMatMul,3\n")
    real_stat, real_lstat, swapped = os.stat, os.lstat, set()

    def swap_after(look):
        def racing(path, *args, **kwargs):  # look, then swap behind the auditor's back
            st = look(path, *args, **kwargs)
            name = "" if isinstance(path, int) else os.path.basename(os.fspath(path))
            if name in ("kernel.csv", "sub") and name not in swapped:
                swapped.add(name)
                victim = trace / name
                if victim.is_dir():
                    shutil.rmtree(victim)
                    victim.symlink_to(secret.parent)
                else:
                    victim.unlink()
                    victim.symlink_to(secret)
            return st

        return racing

    monkeypatch.setattr(os, "stat", swap_after(real_stat))
    monkeypatch.setattr(os, "lstat", swap_after(real_lstat))
    notes: list[str] = []
    recording._copy_input(str(trace), str(tmp_path / "bundle"), "inputs/000", notes)
    monkeypatch.undo()
    copied = [p for p in (tmp_path / "bundle").rglob("*") if p.is_file()]
    assert swapped == {"kernel.csv", "sub"}
    assert all(SECRET not in p.read_text() for p in copied), "the copy followed a swapped link"
    assert any("kernel.csv: not copied" in n for n in notes), notes
