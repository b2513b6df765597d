"""Item 1: the probe runs only a verified interpreter, as the serving user, writing nothing.

The real test starts a stand-in serving process as nobody (65534) from a venv nobody owns and
shows the probe ran as 65534 and left no __pycache__ in that venv; the argv[0] test shows a
process cannot make root run a program by naming it in argv[0].
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from ascend_audit.context import Context, Inputs
from ascend_audit.gather.framework import probe
from ascend_audit.gather.interpreter import serving_interpreter
from ascend_audit.host.base import ProcessInfo
from ascend_audit.host.live import LiveHost
from ascend_audit.policy import load_policy

NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"


def _needs_root_and_system_python() -> None:
    if os.geteuid() != 0:
        pytest.skip("the privilege drop can only be shown when the test runs as root")
    if not os.path.exists(SYSTEM_PYTHON):
        pytest.skip(f"{SYSTEM_PYTHON} absent: no interpreter the unprivileged user can run")


class OnlyThese(LiveHost):
    """The live machine, but only the stand-in processes count as running."""

    def __init__(self, pids: set[int]) -> None:
        super().__init__("/")
        self.pids = pids

    def processes(self) -> list[ProcessInfo]:
        return [p for p in super().processes() if p.pid in self.pids]


@pytest.fixture
def world():
    """A directory nobody can traverse (/tmp is sticky), removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="ascend-audit-probe-"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _start(argv: list[str], executable: str | None = None, cwd: Path | None = None):
    proc = subprocess.Popen(
        argv,
        executable=executable,
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
        cwd=str(cwd) if cwd else "/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # until its cmdline shows the vLLM words
        try:
            if b"serve" in Path(f"/proc/{proc.pid}/cmdline").read_bytes():
                break
        except OSError:
            pass
        time.sleep(0.05)
    return proc


def _pycaches(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("__pycache__")] + [str(p) for p in root.rglob("*.pyc")]


def test_probe_runs_as_the_serving_user_and_writes_nothing(world):
    _needs_root_and_system_python()
    venv = world / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    torch = site / "torch"
    torch.mkdir()
    (torch / "__init__.py").write_text("__version__ = '2.5.1+standin'\n")
    (torch / "version.py").write_text("cuda = None\n")
    for p in [venv, *venv.rglob("*")]:
        os.lchown(p, NOBODY, NOBODY)
    before = _pycaches(venv)
    server = _start(
        [str(venv / "bin" / "python"), "-c", "import time; time.sleep(120)", "vllm", "serve", "m"],
        cwd=venv,
    )
    try:
        ctx = Context(OnlyThese({server.pid}), load_policy(None), Inputs())
        run = probe(ctx)
    finally:
        server.kill()
        server.wait()
    assert run.python == str(venv / "bin" / "python"), run.refused
    assert run.identity is not None and run.identity.uid == NOBODY
    line = next(x for x in run.result.stdout.splitlines() if x.startswith("@@ASCEND_AUDIT_PROBE@@"))
    said = json.loads(line.split("@@", 2)[2])
    assert said["identity"] == {"uid": NOBODY, "gid": NOBODY}, said["identity"]
    assert run.facts.torch_version == "2.5.1+standin"  # the venv's packages were seen
    assert _pycaches(venv) == before == [], "the probe wrote bytecode into the serving venv"


def test_argv0_cannot_choose_what_root_runs(world):
    _needs_root_and_system_python()
    evil = world / "evil" / "bin"
    evil.mkdir(parents=True)
    marker = evil / "planted-program-ran"
    fake = evil / "python3"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    for p in (evil.parent, evil, fake):  # the user owns their program: only exe stops it
        os.lchown(p, NOBODY, NOBODY)
    # a process whose argv[0] names the planted program while it really runs the system python
    server = _start(
        [str(fake), "-c", "import time; time.sleep(120)", "vllm", "serve", "m"],
        executable=SYSTEM_PYTHON,
    )
    try:
        ctx = Context(OnlyThese({server.pid}), load_policy(None), Inputs())
        run = probe(ctx)
    finally:
        server.kill()
        server.wait()
    assert not marker.exists(), "the probe ran the program named by argv[0]"
    assert run.python == os.path.realpath(SYSTEM_PYTHON)


def _fake_proc(root: Path, exe: str, uid: int = 1000) -> ProcessInfo:
    pdir = root / "proc" / "4242"
    pdir.mkdir(parents=True)
    (pdir / "exe").symlink_to(exe)
    (pdir / "status").write_text(
        f"Name:\tpython3\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nGid:\t{uid}\t{uid}\t{uid}\t{uid}\n"
        "Groups:\t44 1000\n"
    )
    return ProcessInfo(4242, "python3", exe, (exe, "-m", "vllm.entrypoints.openai.api_server"), "u")


@pytest.mark.parametrize(
    "how, words",
    [
        ("world-writable-dir", "writable by every user"),
        ("group-writable-file", "writable by group"),
        ("foreign-owner", "owned by uid 2000"),
    ],
)
def test_interpreter_others_could_replace_is_refused(tmp_path, how, words):
    root = tmp_path / "node"
    bindir = root / "opt" / "py" / "bin"
    bindir.mkdir(parents=True)
    py = bindir / "python3.11"
    py.write_text("")
    py.chmod(0o755)
    proc = _fake_proc(root, "/opt/py/bin/python3.11")
    if how == "world-writable-dir":
        bindir.chmod(0o777)
    elif how == "group-writable-file":
        os.chown(py, 1000, 44)
        py.chmod(0o775)
    else:
        os.chown(py, 2000, 2000)
    found = serving_interpreter(LiveHost(str(root)), proc)
    assert found.python is None
    assert words in found.refused and "not probed" in found.refused


def test_interpreter_owned_by_root_or_the_service_is_accepted(tmp_path):
    root = tmp_path / "node"
    bindir = root / "opt" / "py" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python3.11").write_text("")
    (bindir / "python3.11").chmod(0o755)
    os.chown(bindir / "python3.11", 1000, 1000)
    proc = _fake_proc(root, "/opt/py/bin/python3.11")
    found = serving_interpreter(LiveHost(str(root)), proc)
    assert found.python == "/opt/py/bin/python3.11", found.refused
    assert found.identity is not None and (found.identity.uid, found.identity.groups) == (
        1000,
        (44, 1000),
    )


def test_a_process_that_is_not_python_is_not_probed(tmp_path):
    root = tmp_path / "node"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "mindieservice_daemon").write_text("")
    proc = _fake_proc(root, "/usr/bin/mindieservice_daemon")
    found = serving_interpreter(LiveHost(str(root)), proc)
    assert found.python is None and "not a Python interpreter" in found.refused
