"""Issue 27 item 1: every directory a probe's child is given (LD_LIBRARY_PATH, PYTHONPATH, PATH,
the CANN variables) passes the trust gate, resolved where the serving process sees it.

Guard shown once (issue 27): with `gate_environ` returning the environment unchanged,
test_a_directory_another_user_owns_never_reaches_the_child failed (the planted directory was in
the child's LD_LIBRARY_PATH) and so did the unit tests of the gate.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ascend_audit.host.base import ProcessIdentity
from ascend_audit.host.live import LiveHost
from ascend_audit.host.process_paths import gate_environ, same_root

NOBODY = 65534
ENV = "/usr/bin/env"
SLEEP = shutil.which("sleep") or "/bin/sleep"


def _root_only() -> None:
    if os.geteuid() != 0:
        pytest.skip("the privilege drop and the chown of planted directories need root")
    if not os.path.exists(ENV):
        pytest.skip(f"{ENV} absent: nothing to print the child's environment")


@pytest.fixture
def world():
    """A directory every user may traverse (tmp_path's parents may be 0700)."""
    d = Path(tempfile.mkdtemp(prefix="ascend-audit-libpaths-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _dirs(world: Path) -> tuple[Path, Path]:
    good, evil = world / "good" / "lib", world / "evil" / "lib"
    good.mkdir(parents=True)
    evil.mkdir(parents=True)
    os.chown(evil.parent, 2000, 2000)  # another user's directory: root's loader must not read it
    os.chown(evil, 2000, 2000)
    return good, evil


def _start(env: dict[str, str], uid: int | None, code: str = ""):
    creds = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    argv = [sys.executable, "-S", "-c", code] if code else [SLEEP, "60"]
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, cwd="/", **creds)
    time.sleep(0.3)  # until it has exec'd (its environ is then the one given)
    return proc


def _child_env(stdout: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in stdout.splitlines() if "=" in line)


def test_the_gate_drops_what_another_user_could_replace(world):
    _root_only()
    good, evil = _dirs(world)
    loose = world / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    env = {
        "LD_LIBRARY_PATH": f"{evil}:{good}:lib:{loose}",
        "PYTHONPATH": str(evil),
        "ASCEND_OPP_PATH": f"{good}",
        "ASCEND_CUSTOM_OPP_PATH": f"{evil}:{good}",
        "ASCEND_RT_VISIBLE_DEVICES": "0,1",
    }
    gated = gate_environ(env, "/proc/self/root", True, {0})
    assert gated.env["LD_LIBRARY_PATH"] == str(good)
    assert "PYTHONPATH" not in gated.env
    assert gated.env["ASCEND_CUSTOM_OPP_PATH"] == str(good)
    assert gated.env["ASCEND_OPP_PATH"] == str(good)
    assert gated.env["ASCEND_RT_VISIBLE_DEVICES"] == "0,1"  # not a path: kept as it is
    said = "\n".join(gated.notes)
    assert f"dropped {evil}" in said and "writable by uid 2000, its owner" in said
    assert "dropped 'lib'" in said and "writable by every user" in said


def test_a_process_in_another_root_has_its_paths_resolved_there(world):
    _root_only()
    root = world / "container"
    (root / "opt" / "lib").mkdir(parents=True)
    (root / "usr").mkdir()
    (root / "usr" / "lib64").symlink_to("/opt/lib")  # an absolute link: inside its root
    env = {"LD_LIBRARY_PATH": "/usr/lib64:/no/such/dir"}
    gated = gate_environ(env, str(root), False, {0})
    assert gated.env["LD_LIBRARY_PATH"] == f"{root}/opt/lib"
    assert any("/no/such/dir" in n for n in gated.notes)


def test_a_directory_another_user_owns_never_reaches_the_child(world):
    _root_only()
    good, evil = _dirs(world)
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": f"{evil}:{good}", "PYTHONPATH": str(evil)}
    server = _start(env, NOBODY)
    try:
        ident = ProcessIdentity(server.pid, sys.executable, NOBODY, NOBODY, ())
        res = LiveHost("/").run_as([ENV], 10, ident)
    finally:
        server.kill()
        server.wait()
    child = _child_env(res.stdout)
    assert res.status == "ok", res
    assert str(evil) not in res.stdout, "a directory uid 2000 owns reached the child's environment"
    assert child.get("LD_LIBRARY_PATH") == str(good)
    assert any(f"LD_LIBRARY_PATH: dropped {evil}" in n for n in res.notes), res.notes


def test_a_root_service_probe_runs_as_nobody_unless_it_needs_the_devices(world):
    _root_only()
    server = _start({"PATH": "/usr/bin:/bin"}, None)
    try:
        ident = ProcessIdentity(server.pid, sys.executable, 0, 0, ())
        host = LiveHost("/")
        light = host.run_as(["/usr/bin/id", "-u"], 10, ident)
        deep = host.run_as(["/usr/bin/id", "-u"], 10, ident, needs_devices=True)
    finally:
        server.kill()
        server.wait()
    assert light.stdout.strip() == str(NOBODY), light
    assert any("ran as nobody" in n for n in light.notes)
    assert deep.stdout.strip() == "0" and any("NPU devices" in n for n in deep.notes)


def test_a_chrooted_root_service_gets_its_own_directories(world):
    _root_only()
    root = world / "container"
    (root / "opt" / "lib").mkdir(parents=True)
    code = f"import os, time; os.chroot({str(root)!r}); os.chdir('/'); time.sleep(60)"
    server = _start({"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": "/opt/lib:/usr/lib"}, None, code)
    try:
        time.sleep(0.2)
        proc_dir = f"/proc/{server.pid}"
        assert not same_root(proc_dir), "the stand-in did not chroot"
        ident = ProcessIdentity(server.pid, sys.executable, 0, 0, ())
        res = LiveHost("/").run_as([ENV], 10, ident)
    finally:
        server.kill()
        server.wait()
    child = _child_env(res.stdout)
    # its /opt/lib, reached through its root; the host's /usr/lib is not its /usr/lib
    assert child.get("LD_LIBRARY_PATH") == f"{proc_dir}/root/opt/lib", res
    assert any("/usr/lib" in n and "dropped" in n for n in res.notes)
    assert any("ran as root" in n for n in res.notes)
