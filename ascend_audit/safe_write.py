"""Writing outputs as root without clobbering: no write through a planted link, no half files.

A regular (or absent) target is written to a fresh temporary sibling (O_CREAT|O_EXCL|O_NOFOLLOW,
random name ending in `.part`) and renamed over it. A target that is a symbolic link is refused,
unless it leads to a pipe or terminal (`/dev/stdout`), which, like a FIFO or `/dev/null`, is
written in place and never renamed over. `-` is standard output. Directories of outputs are
built in a staging directory beside them and renamed into place in one step.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import stat
import sys
from collections.abc import Callable, Iterable
from typing import IO

# ctypes, secrets (hashlib, OpenSSL) and tempfile are imported where a file is written: every
# command imports this module (OutputError), most write nothing.
STDOUT = "-"
_TTY_MAJORS = frozenset({4, 5, *range(136, 144)})
_RENAME_EXCHANGE = 2


class OutputError(Exception):
    """An output that must not or cannot be written; the message names the path (exit 2)."""


def _in_place_ok(st: os.stat_result) -> bool:
    """A non-regular target that is safe to write in place: a pipe, /dev/null or a terminal."""
    if stat.S_ISFIFO(st.st_mode):
        return True
    if stat.S_ISCHR(st.st_mode):
        major, minor = os.major(st.st_rdev), os.minor(st.st_rdev)
        return (major, minor) == (1, 3) or major in _TTY_MAJORS
    return False


def output_problem(path: str, kind: str = "file") -> str | None:
    """Why `path` cannot be written as an output file (kind "file") or output directory
    (kind "dir"), or None. Checked before an audit starts, and again when writing."""
    if path == STDOUT:
        return "standard output cannot be a directory" if kind == "dir" else None
    try:
        lst = os.lstat(path)
    except FileNotFoundError:
        lst = None
    except OSError as exc:
        return f"{path}: {exc.strerror}"
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        try:
            target = os.stat(path)
        except OSError:
            target = None
        if kind == "file" and target is not None and _in_place_ok(target):
            return None
        return f"{path} is a symbolic link; refusing to write through it (remove it first)"
    if lst is not None:
        if kind == "dir":
            if not stat.S_ISDIR(lst.st_mode):
                return f"{path} exists and is not a directory"
        elif stat.S_ISDIR(lst.st_mode):
            return f"{path} is a directory"
        elif not stat.S_ISREG(lst.st_mode) and not _in_place_ok(lst):
            return f"{path} is not a regular file, a pipe or a terminal; refusing to write it"
        elif not stat.S_ISREG(lst.st_mode):
            return None
    parent = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{path}: {parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{path}: cannot write into {parent} (permission denied)"
    return None


def check_outputs(paths: Iterable[tuple[str, str, str]]) -> None:
    """Refuse unusable outputs, given as (option, path, kind), before any work is done."""
    to_stdout = []
    for option, path, kind in paths:
        if not path:
            continue
        why = output_problem(path, kind)
        if why:
            raise OutputError(f"{option}: {why}")
        if path == STDOUT:
            to_stdout.append(option)
    if len(to_stdout) > 1:
        raise OutputError(f"{' and '.join(to_stdout)}: only one output can be standard output")


def _temp_beside(path: str) -> tuple[int, str]:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    base = os.path.basename(path)
    import secrets

    for _ in range(8):
        tmp = os.path.join(directory, f".{base}.{secrets.token_hex(6)}.part")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise OutputError(f"{path}: cannot create a temporary file beside it")


def write_bytes(path: str, data: bytes, mode: int = 0o644) -> None:
    """Write an output file (see the module doc); raises OutputError naming the path."""
    write_stream(path, lambda fh: fh.write(data), mode)


def write_stream(path: str, produce: Callable[[IO[bytes]], object], mode: int = 0o644) -> None:
    """Write an output file by handing `produce` a binary file to write into; `-` is stdout."""
    if path == STDOUT:
        sys.stdout.flush()
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            buf = io.BytesIO()
            produce(buf)
            sys.stdout.write(buf.getvalue().decode("utf-8", "replace"))
        else:
            produce(out)
            out.flush()
        sys.stdout.flush()
        return
    why = output_problem(path)
    if why:
        raise OutputError(why)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{path}: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        buf = io.BytesIO()
        produce(buf)
        _write_in_place(path, buf.getvalue())
        return
    try:
        fd, tmp = _temp_beside(path)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            produce(fh)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode)
        if os.path.islink(path):  # planted while we wrote: still never written through
            raise OutputError(f"{path} became a symbolic link; refusing to replace it")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: str, text: str, mode: int = 0o644) -> None:
    """write_bytes of UTF-8 text."""
    write_bytes(path, text.encode("utf-8", "surrogateescape"), mode)


def _write_in_place(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        if not _in_place_ok(os.fstat(fd)):
            raise OutputError(f"{path} is not a pipe or terminal; refusing to write it")
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    finally:
        os.close(fd)


def staging_dir(final: str) -> str:
    """A fresh private directory beside `final` to build it in."""
    parent = os.path.dirname(os.path.abspath(final))
    os.makedirs(parent, exist_ok=True)
    import tempfile

    return tempfile.mkdtemp(prefix=f".{os.path.basename(final)}.staging-", dir=parent)


def _exchange(a: str, b: str) -> bool:
    """Atomically swap two paths (renameat2 RENAME_EXCHANGE); False where unsupported."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def publish_dir(staging: str, final: str, replaceable: bool) -> None:
    """Move a finished staging directory to `final` in one step. An existing `final` is
    swapped out and removed when `replaceable` (empty, or an earlier set of the same outputs);
    otherwise each file is renamed into it."""
    if os.path.islink(final):
        shutil.rmtree(staging, ignore_errors=True)
        raise OutputError(f"{final} is a symbolic link; refusing to write through it")
    try:
        os.rename(staging, final)  # absent, or an empty directory: atomic
        return
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            shutil.rmtree(staging, ignore_errors=True)
            raise OutputError(f"{final}: cannot write ({exc.strerror})") from None
    if replaceable:
        if _exchange(staging, final):
            shutil.rmtree(staging, ignore_errors=True)  # now the previous set
            return
        old = staging + ".old"
        os.rename(final, old)
        os.rename(staging, final)
        shutil.rmtree(old, ignore_errors=True)
        return
    for name in sorted(os.listdir(staging)):
        os.replace(os.path.join(staging, name), os.path.join(final, name))
    shutil.rmtree(staging, ignore_errors=True)
