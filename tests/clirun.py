"""The one way tests run the CLI: in-process (`cli`) or as a real child process (`cli_process`).

`cli` calls `ascend_audit.cli.entry` in this interpreter, as `python -m ascend_audit ARGS` would
run it, and returns what `subprocess.run(..., capture_output=True, text=True)` would: it saves
a process start-up and the package's imports per call. Use `cli_process` where the process
boundary is what is tested (PATH lookup of the tool itself, signals, timeouts of a hung child,
stdio encodings, memory of a fresh interpreter).
"""

from __future__ import annotations

import contextlib
import io
import locale
import os
import signal
import subprocess
import sys
import tempfile
import traceback
import types
from collections.abc import Iterator, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
_MAIN = REPO / "ascend_audit" / "__main__.py"
# what an in-process call cannot give the way a fresh interpreter does: use cli_process
_PROCESS_ONLY = ("PYTHONIOENCODING", "PYTHONUTF8", "PYTHONWARNINGS", "PYTHONHASHSEED")


def cli_process(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
    timeout: float = 180,
) -> subprocess.CompletedProcess[str]:
    """Run `python -m ascend_audit ARGS` as a child process; the package is found via PYTHONPATH."""
    child = dict(env if env is not None else os.environ)
    child["PYTHONPATH"] = str(REPO) + os.pathsep + child.get("PYTHONPATH", "")
    return subprocess.run(
        [PY, "-m", "ascend_audit", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=child,
        cwd=str(cwd) if cwd is not None else None,
        input=input,
    )


def cli(
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in this process with its own argv, environment, cwd and stdio.

    The timeout is pytest-timeout's; a call that needs its own bound belongs in cli_process.
    """
    del timeout
    if env is not None and any(k in env for k in _PROCESS_ONLY):
        raise ValueError(f"an environment with any of {_PROCESS_ONLY} needs cli_process")
    if any(os.path.exists(os.path.join(cwd or ".", d)) for d in _checks_dirs(args)):
        raise ValueError("--checks-dir runs code that could change this process: use cli_process")
    out, err = io.BytesIO(), io.BytesIO()
    with _as_a_process(args, env, cwd, input, out, err):
        code = _call_entry()
    argv = [PY, "-m", "ascend_audit", *args]
    return subprocess.CompletedProcess(argv, code, _text(out), _text(err))


def _checks_dirs(args: tuple[str, ...]) -> list[str]:
    dirs = [b for a, b in zip(args, args[1:]) if a == "--checks-dir"]
    return dirs + [a.split("=", 1)[1] for a in args if a.startswith("--checks-dir=")]


def _call_entry() -> int:
    from ascend_audit.cli import entry

    try:
        entry()
    except SystemExit as exc:  # what the interpreter makes of sys.exit(code)
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # an exception escaping entry: the interpreter's traceback, exit 1
        traceback.print_exc(file=sys.stderr)
        return 1
    return 0


def _text(buf: io.BytesIO) -> str:
    """Decode like subprocess's text mode: the locale's encoding, universal newlines."""
    data = buf.getvalue().decode(locale.getpreferredencoding(False))
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _stream(buf: io.BytesIO) -> io.TextIOWrapper:
    # a pipe's stream: UTF-8, not a tty, no fileno (so the terminal width falls back as in a child)
    return io.TextIOWrapper(buf, encoding="utf-8", errors="strict", write_through=True)


@contextlib.contextmanager
def _as_a_process(
    args: tuple[str, ...],
    env: Mapping[str, str] | None,
    cwd: str | Path | None,
    input: str | None,
    out: io.BytesIO,
    err: io.BytesIO,
) -> Iterator[None]:
    """Give the call a process's state (argv, __main__, environ, cwd, stdio, tempdir, SIGTERM
    handler) and put this process's back afterwards, dropping the drop-in check modules."""
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_sys = {
        k: getattr(sys, k)
        for k in ("argv", "stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")
    }
    saved_main = sys.modules.get("__main__")
    saved_modules = set(sys.modules)
    saved_tempdir = tempfile.tempdir
    saved_sigterm = signal.getsignal(signal.SIGTERM)
    main = types.ModuleType("__main__")
    main.__package__ = "ascend_audit"  # click names the program `python -m ascend_audit`
    main.__file__ = str(_MAIN)
    stdout, stderr = _stream(out), _stream(err)
    stdin = io.StringIO(input or "")
    try:
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        tempfile.tempdir = None  # TMPDIR as the call's environment says
        sys.argv = [str(_MAIN), *args]
        sys.modules["__main__"] = main
        sys.stdin = sys.__stdin__ = stdin
        sys.stdout = sys.__stdout__ = stdout
        sys.stderr = sys.__stderr__ = stderr
        yield
    finally:
        for stream in (stdout, stderr):
            stream.flush()
            stream.detach()  # keep the buffer open when the wrapper is collected
        for k, v in saved_sys.items():
            setattr(sys, k, v)
        if saved_main is not None:
            sys.modules["__main__"] = saved_main
        for name in set(sys.modules) - saved_modules:
            if name.startswith("ascend_audit_dropin_"):
                del sys.modules[name]
        signal.signal(signal.SIGTERM, saved_sigterm)
        tempfile.tempdir = saved_tempdir
        os.chdir(saved_cwd)
        if os.environ != saved_env:
            os.environ.clear()
            os.environ.update(saved_env)
