"""Which interpreter the framework probe may run for a serving process, and as whom.

The interpreter is the file /proc/PID/exe points at (argv[0] is whatever the process's owner
wrote); argv[0] is kept only when it resolves to that same file, so a venv keeps its
site-packages. An interpreter whose file or any parent directory someone other than root and
the process's owner could replace is refused: root would run that someone's program.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from ascend_audit.host.base import Host, ProcessIdentity, ProcessInfo
from ascend_audit.host.trust import verify_program

PYTHON_NAME = re.compile(r"^python[\d.]*$")


@dataclass(frozen=True)
class Interpreter:
    """The interpreter to probe and whom to run it as; `refused` says why there is none."""

    python: str | None
    identity: ProcessIdentity | None = None
    refused: str = ""


def replaceable_by_others(host: Host, path: str, owner_uid: int) -> str | None:
    """Why someone other than root and `owner_uid` could replace `path` (a node path, every
    link followed), or None: host/trust.py's verification, asked of the host."""
    return verify_program(path, (0, owner_uid), host.lstat, host.readlink, acl=None).why or None


def serving_interpreter(host: Host, proc: ProcessInfo) -> Interpreter:
    """The verified interpreter of a serving process, or why the probe must not run it."""
    pid = proc.pid
    ident = host.process_identity(pid)
    if ident is None:
        return Interpreter(None, None, f"process {pid}: /proc/{pid}/status cannot be read")
    exe = ident.exe
    if not exe:
        return Interpreter(None, ident, f"process {pid}: /proc/{pid}/exe cannot be read")
    if exe.endswith(" (deleted)"):
        return Interpreter(
            None, ident, f"process {pid}: its interpreter {exe} was replaced since it started"
        )
    if not PYTHON_NAME.match(posixpath.basename(exe)):
        return Interpreter(None, ident, f"process {pid} runs {exe}, not a Python interpreter")
    python = exe
    argv0 = proc.cmdline[0] if proc.cmdline else ""
    if argv0.startswith("/") and argv0 != exe and host.realpath(argv0) == host.realpath(exe):
        python = argv0  # a venv's bin/python: same file, and its pyvenv.cfg keeps the packages
    for path in dict.fromkeys((python, exe)):  # each walk follows and verifies every link
        why = replaceable_by_others(host, path, ident.uid)
        if why:
            return Interpreter(
                None,
                ident,
                f"the interpreter of process {pid} ({python}) is not probed: {why} (root runs "
                "only a program no other user can replace)",
            )
    return Interpreter(python, ident)
