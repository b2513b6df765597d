"""Reads that never leave their root, never block and only ever return a regular file's bytes.

A node path is resolved inside the root component by component: with openat2(RESOLVE_IN_ROOT)
where the kernel has it, else by an O_NOFOLLOW walk that follows links itself (absolute targets
restart at the root, `..` stops at it) and fails closed at its hop limit. The file is opened once
with O_NONBLOCK and judged by fstat of what was opened, so nothing can be swapped in between.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import io
import itertools
import os
import stat
from collections.abc import Callable, Iterator
from typing import IO, Any, overload

MAX_HOPS = 40
_O_PATH = getattr(os, "O_PATH", 0o10000000)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_NO_SYMLINKS = 0x04
_RESOLVE_BENEATH = 0x08
_RESOLVE_IN_ROOT = 0x10
_SYS_OPENAT2 = {"x86_64": 437, "aarch64": 437}
_openat2_works: bool | None = None


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or directory where a regular file was required."""


def kind_of(mode: int) -> str:
    """A file type in words, for messages."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _require_regular(fd: int, shown: str) -> os.stat_result:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotRegularFile(errno.EINVAL, f"not a regular file ({kind_of(st.st_mode)})", shown)
    return st


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


def _openat2(dirfd: int, rel: str, flags: int, links: bool = True) -> int:
    """openat2(dirfd, rel, flags) resolved in the root (links followed inside it), or with
    links=False beneath it with no symlink at all; OSError on failure."""
    import platform

    libc = ctypes.CDLL(None, use_errno=True)
    resolve = (
        _RESOLVE_IN_ROOT | _RESOLVE_NO_MAGICLINKS
        if links
        else _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS
    )
    how = _OpenHow(flags, 0, resolve)
    fd = libc.syscall(
        ctypes.c_long(_SYS_OPENAT2[platform.machine()]),
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(rel)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), rel)
    return int(fd)


def _has_openat2() -> bool:
    global _openat2_works
    if _openat2_works is None:
        import platform

        if platform.machine() not in _SYS_OPENAT2 or os.environ.get("ASCEND_AUDIT_NO_OPENAT2"):
            _openat2_works = False
        else:
            try:
                os.close(_openat2(-100, "/", os.O_RDONLY | os.O_DIRECTORY))  # AT_FDCWD
                _openat2_works = True
            except (OSError, AttributeError, TypeError):
                _openat2_works = False
    return _openat2_works


def _walk_open(rootfd: int, rel: str, flags: int, links: bool = True) -> int:
    """Open `rel` under rootfd following links by hand, never above the root (O_NOFOLLOW walk);
    with links=False any symlink on the way is refused (ELOOP)."""
    parts = [p for p in rel.split("/") if p and p != "."]
    stack: list[int] = []  # fds of the directories below the root we are in
    hops = 0
    try:
        while parts:
            part = parts.pop(0)
            here = stack[-1] if stack else rootfd
            if part == "..":
                if not links:
                    raise OSError(errno.EXDEV, "`..` is not allowed here", rel)
                if stack:
                    os.close(stack.pop())
                continue
            last = not parts
            try:
                fd = os.open(part, _O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=here)
            except OSError as exc:
                raise OSError(exc.errno, exc.strerror, rel) from None
            st = os.fstat(fd)
            if stat.S_ISLNK(st.st_mode):
                os.close(fd)
                if not links:
                    raise OSError(errno.ELOOP, "a symbolic link is in the way", rel)
                hops += 1
                if hops > MAX_HOPS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", rel)
                target = os.readlink(part, dir_fd=here)
                if target.startswith("/"):
                    while stack:
                        os.close(stack.pop())
                parts = [p for p in target.split("/") if p and p != "."] + parts
                continue
            if last:
                os.close(fd)
                try:
                    return os.open(part, flags | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=here)
                except OSError as exc:
                    raise OSError(exc.errno, exc.strerror, rel) from None
            if not stat.S_ISDIR(st.st_mode):
                os.close(fd)
                raise OSError(errno.ENOTDIR, "not a directory", rel)
            stack.append(fd)
        return os.open(".", flags | os.O_CLOEXEC, dir_fd=stack[-1] if stack else rootfd)
    finally:
        for fd in stack:
            os.close(fd)


def _reopen(pfd: int, flags: int, shown: str, again: Callable[[], int]) -> int:
    """Open what the O_PATH fd `pfd` names, once fstat shows a regular file or a directory:
    nothing else is ever opened (opening a FIFO releases its writer, opening a device runs its
    driver: a watchdog arms, a tape rewinds). Through /proc/self/fd the very inode is opened;
    without /proc, `again()` opens the path anew and must reach the same inode."""
    st = os.fstat(pfd)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        raise NotRegularFile(errno.EINVAL, f"not a regular file ({kind_of(st.st_mode)})", shown)
    try:
        return os.open(f"/proc/self/fd/{pfd}", flags)
    except FileNotFoundError:
        if os.path.isdir("/proc/self/fd"):
            raise
    fd = again()
    now = os.fstat(fd)
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        raise OSError(errno.EAGAIN, "the file was replaced while it was opened", shown)
    return fd


def open_in_root(root: str, path: str, flags: int = os.O_RDONLY, links: bool = True) -> int:
    """An fd of node path `path` resolved inside `root` (no link leads out), opened O_NONBLOCK;
    links=False refuses any symlink on the way (bundles hold no links). Only a regular file or
    a directory is ever opened for reading: anything else raises NotRegularFile unopened."""
    # openat2 refuses O_PATH with other flags than O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC
    flags |= os.O_CLOEXEC if flags & _O_PATH else os.O_NONBLOCK | os.O_CLOEXEC
    rel = path.lstrip("/") or "."
    rootfd = os.open(root or "/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def resolve(how: int) -> int:
        if _has_openat2():
            return _openat2(rootfd, rel, how, links)
        return _walk_open(rootfd, rel, how, links)

    try:
        if flags & (_O_PATH | os.O_DIRECTORY):  # neither opens a FIFO or a device
            return resolve(flags)
        pfd = resolve(_O_PATH | os.O_CLOEXEC)
        try:
            return _reopen(pfd, flags, path, lambda: resolve(flags))
        finally:
            os.close(pfd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO opened for writing) cannot be opened
            raise NotRegularFile(errno.EINVAL, "not a regular file (a socket)", path) from None
        raise
    finally:
        os.close(rootfd)


def read_bytes(root: str, path: str, limit: int, links: bool = True) -> bytes:
    """Up to limit+1 bytes of a regular file inside root (the caller sees truncation)."""
    fd = open_in_root(root, path, links=links)
    _require_regular(fd, path)
    with os.fdopen(fd, "rb") as fh:
        return _read_upto(fh, limit + 1)


def _read_upto(fh: IO[bytes], n: int) -> bytes:
    chunks, left = [], n
    while left > 0:
        chunk = fh.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def stat_in_root(root: str, path: str) -> os.stat_result:
    """stat of a node path resolved inside root (links followed, never out of it)."""
    fd = open_in_root(root, path, _O_PATH)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def lstat_in_root(root: str, path: str) -> os.stat_result:
    """lstat of a node path: its parent resolved inside root, the last component not followed."""
    parent, name = os.path.split("/" + path.strip("/"))
    fd = open_in_root(root, parent, _O_PATH | os.O_DIRECTORY)
    try:
        return os.stat(name or ".", dir_fd=fd, follow_symlinks=False)
    finally:
        os.close(fd)


def listdir_in_root(root: str, path: str, limit: int | None = None) -> list[str]:
    """Entries of a node directory resolved inside root; at most `limit` of them, in directory
    order (a process can hold a million fds: a listing that stops costs no more than it keeps)."""
    fd = open_in_root(root, path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if limit is None:
            return os.listdir(fd)
        with os.scandir(fd) as it:
            return [e.name for e in itertools.islice(it, max(limit, 0))]
    finally:
        os.close(fd)


def open_regular(
    path: str | os.PathLike[str],
    mode: str = "rb",
    *,
    dir_fd: int | None = None,
    follow: bool = True,
    **kwargs: Any,
) -> Any:
    """Open a user-given input for reading without blocking on it: a FIFO, socket, device or
    directory raises NotRegularFile naming the path. Use instead of open() for every input.
    follow=False refuses a symbolic link as the last component (NotRegularFile); `dir_fd`
    resolves `path` from an open directory (a walk that nothing can re-point)."""
    if any(c in mode for c in "wax+"):
        raise ValueError("open_regular only reads")
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
    nofollow = 0 if follow else os.O_NOFOLLOW  # never for /proc/self/fd: a magic link

    def again() -> int:
        return os.open(path, flags | nofollow, dir_fd=dir_fd)

    try:
        pfd = os.open(path, _O_PATH | os.O_CLOEXEC | nofollow, dir_fd=dir_fd)  # judged first
        try:
            fd = _reopen(pfd, flags, os.fspath(path), again)
        finally:
            os.close(pfd)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise NotRegularFile(errno.EINVAL, "not a regular file (a socket)", path) from None
        raise
    try:
        _require_regular(fd, os.fspath(path))
    except NotRegularFile:
        raise
    except OSError:
        os.close(fd)
        raise
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    return open(fd, mode, **kwargs)


def readlink_in_root(root: str, path: str) -> str:
    """Target of the link at node path `path` (its parent resolved inside root); OSError else."""
    parent, name = os.path.split("/" + path.strip("/"))
    if not name:
        raise OSError(errno.EINVAL, "not a link", path)
    fd = open_in_root(root, parent, _O_PATH | os.O_DIRECTORY)
    try:
        return os.readlink(name, dir_fd=fd)
    finally:
        os.close(fd)


LINE_CAP = 1 << 20  # characters of one line of a table (a CSV row); longer lines are cut out
OVERLONG = "<line longer than the cap: skipped>\n"


@overload
def bounded_lines(fh: IO[str], limit: int = ...) -> Iterator[str]: ...
@overload
def bounded_lines(fh: IO[bytes], limit: int = ...) -> Iterator[bytes]: ...
def bounded_lines(fh: IO[Any], limit: int = LINE_CAP) -> Iterator[Any]:
    """The lines of a text or binary file, never holding more than `limit` characters (bytes) of
    one: a longer line is read through in pieces and yielded as OVERLONG (a malformed row to its
    reader), as bytes for a binary file."""
    nl: Any = None
    overlong: Any = None
    while True:
        line = fh.readline(limit + 1)
        if not line:
            return
        if nl is None:
            binary = isinstance(line, bytes)
            nl, overlong = (b"\n", OVERLONG.encode()) if binary else ("\n", OVERLONG)
        if len(line) <= limit or line.endswith(nl):
            yield line
            continue
        while True:  # the rest of the overlong line
            rest = fh.readline(limit)
            if not rest or rest.endswith(nl):
                break
        yield overlong


class LineTooLong(ValueError):
    """A line of a file read by line_chunks does not fit in its largest buffer."""


def line_chunks(
    fh: io.BufferedIOBase,
    size: int,
    max_line: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[memoryview]:
    """The rest of a binary file in pieces of about `size` bytes, each cut after a newline; the
    last piece lacks the newline when the file ends without one. Memory stays bounded: a line
    longer than the buffer grows it up to `max_line` bytes (default `size`), then LineTooLong.
    Each piece views the buffer and is valid until the next one is asked for."""
    cap = size if max_line is None else max(size, max_line)
    buf = bytearray(size)
    filled = 0
    while True:
        if filled == len(buf):
            if len(buf) >= cap:
                if fh.read(1):  # (a last line of exactly `cap` bytes without its newline fits)
                    raise LineTooLong(f"a line longer than {cap} bytes")
                yield memoryview(buf)
                return
            buf = buf + bytes(min(len(buf), cap - len(buf)))  # new object: views stay valid
        with memoryview(buf) as view:
            got = fh.readinto(view[filled:])
            if progress and got:
                progress(got)
            if not got:
                if filled:
                    yield view[:filled]
                return
            filled += got
            cut = buf.rfind(b"\n", 0, filled) + 1
            if cut == 0:
                continue
            yield view[:cut]
        tail = filled - cut
        buf[:tail] = buf[cut:filled]
        filled = tail
