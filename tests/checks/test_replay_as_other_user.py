"""A bundle replays to the same results whoever replays it (issue 15 item 1, issue 13 item 5).

The auditing user is a gathered fact recorded in the bundle (`cached_facts.auditing_user`); the
/dev owners are named with the bundle's own /etc/passwd and /etc/group. The replay runs once as
root and once in a forked child that dropped to uid/gid 65534 (nobody), which must agree.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ascend_audit.examples_index import example_path

EXAMPLE = "atlas-800t-a2-ready"


@functools.cache
def registry() -> Any:
    """The built-in checks, loaded once by the parent (as root): the checks are the code under
    test, read from the checkout; only the bundle is what another user replays."""
    from ascend_audit.registry import load_registry

    return load_registry(entry_points=False)


def replay(bundle: str) -> list[list[Any]]:
    """(check id, status, summary) of every result of replaying the bundle at BUNDLE."""
    from ascend_audit.context import Context, Inputs
    from ascend_audit.engine import Selection, run_audit
    from ascend_audit.host.snapshot import SnapshotHost
    from ascend_audit.inventory import build_inventory
    from ascend_audit.policy import parse_policy

    host = SnapshotHost(bundle)
    inputs = Inputs.from_dict(host.manifest.get("run_inputs") or {})
    ctx = Context(host, parse_policy(host.policy_text() or ""), inputs)
    report = run_audit(registry(), ctx, Selection(), inventory=build_inventory)
    return [[r.id, r.status.value, r.summary] for r in report.results]


CLONE_NEWNS, MS_REC, MS_PRIVATE, MS_BIND = 0x20000, 0x4000, 0x40000, 0x1000


def _blocked_ancestors(path: str) -> list[str]:
    """Directories above PATH that others may not enter (e.g. root's 0700 home)."""
    out, parts = [], Path(path).resolve().parts
    for i in range(2, len(parts)):
        ancestor = os.path.join(*parts[:i])
        if not os.stat(ancestor).st_mode & 0o001:
            out.append(ancestor)
    return out


def open_the_way(path: str) -> None:
    """In this (forked, still root) process only: make PATH reachable for any user, wherever the
    checkout sits. Each directory above it that others may not enter is covered, in a private
    mount namespace, by a 0755 tmpfs holding only a bind mount of the next directory down; the
    files themselves and every other process see nothing change."""
    import ctypes

    blocked = _blocked_ancestors(path)
    if not blocked:
        return
    parts = Path(path).resolve().parts
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc: int, what: str) -> None:
        if rc != 0:
            raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")

    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    for ancestor in blocked:
        below = os.path.join(ancestor, parts[len(Path(ancestor).parts)])
        keep = os.open(below, os.O_PATH)  # the real directory, before the tmpfs hides it
        try:
            check(libc.mount(b"tmpfs", ancestor.encode(), b"tmpfs", 0, b"mode=0755"), "tmpfs")
            os.mkdir(below, 0o755)
            fd_path = f"/proc/self/fd/{keep}".encode()
            check(libc.mount(fd_path, below.encode(), None, MS_BIND, None), f"bind {below}")
        finally:
            os.close(keep)


def replay_as(uid: int, bundle: str) -> list[list[Any]]:
    """The same replay in a child process running as UID (every module already imported)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop to uid, replay, send the results, exit without cleanup
        code = 1
        try:
            os.close(read_end)
            import ascend_audit

            try:  # the code, its data files and the bundle, wherever they sit
                for path in (os.path.abspath(__file__), ascend_audit.__file__, bundle):
                    open_the_way(os.path.dirname(path))
            except OSError as exc:
                with os.fdopen(write_end, "wb") as fh:
                    fh.write(json.dumps({"skip": str(exc)}).encode())
                code = 0
                os._exit(code)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            try:
                data = json.dumps({"uid": os.geteuid(), "results": replay(bundle)}).encode()
                code = 0
            except BaseException:  # the parent's failure message names what the child hit
                import traceback

                data = json.dumps({"error": traceback.format_exc()}).encode()
            with os.fdopen(write_end, "wb") as fh:
                fh.write(data)
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as fh:
        raw = fh.read()
    _, status = os.waitpid(pid, 0)
    got = json.loads(raw or b"{}")
    if got.get("skip"):
        pytest.skip(f"cannot make the checkout reachable for uid {uid} here: {got['skip']}")
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
        f"the child replay failed: {got.get('error') or status}"
    )
    assert got["uid"] == uid
    return got["results"]


def test_bundle_records_who_audited():
    with open(os.path.join(example_path(EXAMPLE), "manifest.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    assert manifest["cached_facts"]["auditing_user"] == {"name": "root", "uid": 0}


def readable_copy(tmp_path: Path, name: str = EXAMPLE) -> str:
    """The bundled example copied out of the checkout, every file readable by any user."""
    tmp_path.chmod(0o755)  # pytest's base temp dir above it stays 0700: see open_the_way
    copy = tmp_path / name
    shutil.copytree(example_path(name), copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return str(copy)


@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0, reason="needs root to drop uid")
def test_replay_as_nobody_gives_the_same_results(tmp_path):
    bundle = readable_copy(tmp_path)
    as_root = replay(bundle)
    dev = next(r for r in as_root if r[0] == "DRV-DEV-001")
    assert dev[1] == "PASS", dev
    assert replay_as(65534, bundle) == as_root
