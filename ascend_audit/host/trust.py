"""Whether the auditor may run a program: the one verification every launch passes.

A program is trusted when the file, every symbolic link on the way to it and every directory
those sit in are out of reach of users other than the trusted ones (root and the auditing
user; for the framework probe, the serving user it runs as): owned by a trusted uid, not
writable by others (a sticky directory, such as /tmp, lets others add entries but not replace
a trusted one), and the file is a regular executable. PATH entries that are empty or relative
(``""``, ``.``, ``bin``) name the current directory and are never searched.
"""

from __future__ import annotations

import os
import posixpath
import stat as stat_mod
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ascend_audit.host.base import StatInfo
from ascend_audit.safe_io import read_bytes

MAX_LINKS = 40
MAX_INTERPRETERS = 4  # the kernel's own limit on nested #! interpreters (BINPRM_MAX_RECURSION)
SHEBANG_BYTES = 256  # what the kernel reads of a script's first line (BINPRM_BUF_SIZE)

Lstat = Callable[[str], "StatInfo | None"]
Readlink = Callable[[str], "str | None"]
AclCheck = Callable[[str, StatInfo, "frozenset[int]"], "str | None"]
_ACL_USER, _ACL_GROUP, _ACL_MASK = 0x02, 0x08, 0x10


def owner_name(uid: int) -> str:
    """The auditing machine's name for a uid (the uid itself when it has none)."""
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (KeyError, ImportError):
        return str(uid)


def group_name(gid: int) -> str:
    """The auditing machine's name for a gid (the gid itself when it has none)."""
    try:
        import grp

        return grp.getgrgid(gid).gr_name
    except (KeyError, ImportError):
        return str(gid)


def kind_name(mode: int) -> str:
    """StatInfo.kind of a mode: file, dir, char, block, link or other."""
    for test, name in (
        (stat_mod.S_ISREG, "file"),
        (stat_mod.S_ISDIR, "dir"),
        (stat_mod.S_ISCHR, "char"),
        (stat_mod.S_ISBLK, "block"),
        (stat_mod.S_ISLNK, "link"),
    ):
        if test(mode):
            return name
    return "other"


def stat_info(st: os.stat_result) -> StatInfo:
    """A StatInfo of an os.stat_result, owner and group named."""
    return StatInfo(
        st.st_mode,
        st.st_uid,
        st.st_gid,
        owner_name(st.st_uid),
        group_name(st.st_gid),
        kind_name(st.st_mode),
        st.st_size,
    )


def local_lstat(path: str) -> StatInfo | None:
    """lstat of a path of the auditing machine (a link is not followed), None when absent."""
    try:
        return stat_info(os.lstat(path))
    except (OSError, ValueError):
        return None


def local_readlink(path: str) -> str | None:
    try:
        return os.readlink(path)
    except (OSError, ValueError):
        return None


_WHAT = {"dir": "the directory", "link": "the link", "file": "the file"}


def local_acl(path: str, st: StatInfo, trusted: frozenset[int]) -> str | None:
    """Why a POSIX access ACL lets another user or group write `path` (the mode's group bits
    show only the ACL's mask, so a root-group 0775 entry may still be writable by uid 1000)."""
    if st.kind not in ("dir", "file") or (st.kind == "dir" and st.mode & stat_mod.S_ISVTX):
        return None
    try:
        raw = os.getxattr(path, "system.posix_acl_access", follow_symlinks=False)
    except (OSError, AttributeError):
        return None  # no ACL (or no xattr support): the mode says it all
    what = _WHAT.get(st.kind, f"the {st.kind}")
    if len(raw) < 4 or (len(raw) - 4) % 8:
        return f"{what} {path} has an ACL that cannot be read"
    entries = [struct.unpack_from("<HHI", raw, 4 + 8 * i) for i in range((len(raw) - 4) // 8)]
    mask = next((perm for tag, perm, _ in entries if tag == _ACL_MASK), 7)
    for tag, perm, ident in entries:
        if not perm & mask & 2:
            continue
        if tag == _ACL_USER and ident not in trusted:
            return f"{what} {path} is writable by uid {ident} through an ACL"
        if tag == _ACL_GROUP and ident != 0:
            return f"{what} {path} is writable by group {group_name(ident)} through an ACL"
    return None


def _uid_words(st: StatInfo) -> str:
    name = st.owner if st.owner and st.owner != str(st.uid) else ""
    return f"uid {st.uid} ({name})" if name else f"uid {st.uid}"


def unsafe(path: str, st: StatInfo, trusted: Iterable[int]) -> str | None:
    """Why another user could replace `path` (one entry, not its parents), or None."""
    what = _WHAT.get(st.kind, f"the {st.kind}")
    if st.uid not in set(trusted):
        if st.kind == "dir":
            return f"{what} {path} is writable by {_uid_words(st)}, its owner"
        return f"{what} {path} is owned by {_uid_words(st)}"
    if st.kind == "link":
        return None  # a link's mode means nothing; who may replace it is its directory's say
    sticky = st.kind == "dir" and st.mode & stat_mod.S_ISVTX
    if st.mode & 0o002 and not sticky:
        return f"{what} {path} is writable by every user (mode {st.mode_octal})"
    if st.mode & 0o020 and st.gid != 0 and not sticky:
        return f"{what} {path} is writable by group {st.group or st.gid} (mode {st.mode_octal})"
    return None


@dataclass(frozen=True)
class Verdict:
    """A program checked: the real file it reaches, or why it must not run."""

    path: str  # the program as it was found
    real: str = ""  # the regular file reached with every link followed ("" when refused)
    why: str = ""  # which entry another user could replace ("" when the program may run)

    @property
    def ok(self) -> bool:
        return not self.why

    @property
    def refused(self) -> str:
        """ "refused PATH: why", or "" when the program may run."""
        return f"refused {self.path}: {self.why}" if self.why else ""


def verify_program(
    path: str,
    trusted: Iterable[int],
    lstat: Lstat = local_lstat,
    readlink: Readlink = local_readlink,
    acl: AclCheck | None = local_acl,
) -> Verdict:
    """Walk `path` component by component, following each link, and verify every directory,
    link and the final file; `lstat`/`readlink`/`acl` answer for the machine (local by
    default; a Host's for a node path, where ACLs are not recorded)."""
    walked = verify_walk(path, trusted, lstat, readlink, acl)
    if not walked.ok:
        return walked
    final = walked.real
    last = lstat(final)
    if last is None:
        return Verdict(path, "", f"{final} cannot be inspected")
    if last.kind != "file":
        return Verdict(path, "", f"{final} is not a regular file (it is a {last.kind})")
    if not last.mode & 0o111:
        return Verdict(path, "", f"{final} is not executable (mode {last.mode_octal})")
    return walked


def verify_walk(
    path: str,
    trusted: Iterable[int],
    lstat: Lstat = local_lstat,
    readlink: Readlink = local_readlink,
    acl: AclCheck | None = local_acl,
) -> Verdict:
    """verify_program's walk without its last test: every directory and link on the way to
    `path`, and what it reaches, owned by a trusted uid and writable by no one else; `real` is
    the path reached (which may be a directory)."""
    trusted = frozenset(trusted)

    def refuse(why: str) -> Verdict:
        return Verdict(path, "", why)

    if not path.startswith("/"):
        return refuse("not an absolute path (it would depend on the working directory)")
    root = lstat("/")
    if root is None:
        return refuse("/ cannot be inspected")
    why = unsafe("/", root, trusted) or (acl("/", root, trusted) if acl else None)
    if why:
        return refuse(why)
    pending = [p for p in path.split("/") if p]
    real: list[str] = []
    hops = 0
    while pending:
        part = pending.pop(0)
        if part == ".":
            continue
        if part == "..":
            if real:
                real.pop()
            continue
        here = "/" + "/".join([*real, part])
        st = lstat(here)
        if st is None:
            return refuse(f"{here} does not exist or cannot be inspected")
        why = unsafe(here, st, trusted) or (acl(here, st, trusted) if acl else None)
        if why:
            return refuse(why)
        if st.kind == "link":
            hops += 1
            target = readlink(here)
            if hops > MAX_LINKS or target is None:
                return refuse(f"the link {here} cannot be followed")
            if target.startswith("/"):
                real = []
            pending = [p for p in target.split("/") if p] + pending
            continue
        if pending and st.kind != "dir":
            return refuse(f"{here} is not a directory")
        real.append(part)
    return Verdict(path, "/" + "/".join(real))


def shebang(head: bytes) -> tuple[str, str] | None:
    """(interpreter, its one optional argument) of a `#!` line, split as the kernel splits it;
    None when `head` is not a script's; ("", "") when the line is empty or too long."""
    if not head.startswith(b"#!"):
        return None
    line, newline, _ = head[2:].partition(b"\n")
    if not newline and len(head) >= SHEBANG_BYTES:
        return "", ""  # the kernel would run a truncated interpreter path, or refuse
    words = line.strip(b" \t\r").split(None, 1)
    if not words:
        return "", ""
    return os.fsdecode(words[0]), os.fsdecode(words[1].strip()) if len(words) > 1 else ""


def env_program(arg: str) -> str | None:
    """The program `/usr/bin/env ARG` runs (options, `-S` splitting and VAR=value skipped)."""
    words = arg.split()
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif word.startswith("-") or "=" in word:
            i += 1
        else:
            return word
    return None


def local_head(path: str) -> bytes | None:
    """The first bytes of a local file, where a `#!` line would be (None when unreadable)."""
    try:
        return read_bytes("/", path, SHEBANG_BYTES - 1)  # up to limit + 1 bytes
    except OSError:
        return None


def verify_launch(
    path: str,
    trusted: Iterable[int],
    path_env: str,
    head: Callable[[str], bytes | None] = local_head,
) -> Verdict:
    """verify_program for a program to exec, then for each `#!` interpreter the kernel would
    run in turn (and the program `env` would find on `path_env`): a trusted script naming an
    interpreter another user could replace is refused like that interpreter itself."""
    trusted = frozenset(trusted)
    first = verify_program(path, trusted)
    step = first
    for _ in range(MAX_INTERPRETERS + 1):
        if not step.ok:
            return Verdict(path, "", step.why)
        data = head(step.real)
        if data is None:
            return Verdict(path, "", f"{step.real} cannot be read to find its interpreter")
        line = shebang(data)
        if line is None:
            return first
        interpreter, arg = line
        if not interpreter.startswith("/"):
            why = "an empty or over-long #! line" if not interpreter else f"{interpreter!r}"
            return Verdict(path, "", f"the script {step.real} names {why} as its interpreter")
        step = _interpreter(step.real, interpreter, arg, trusted, path_env)
    return Verdict(path, "", f"more than {MAX_INTERPRETERS} nested #! interpreters")


def _interpreter(
    script: str, interpreter: str, arg: str, trusted: frozenset[int], path_env: str
) -> Verdict:
    """The verdict on a script's interpreter (for `env`, on the program env would run)."""
    verdict = verify_program(interpreter, trusted)
    if verdict.ok and posixpath.basename(verdict.real) == "env":
        program = env_program(arg)
        found = program if program and "/" in program else find_on_path(program or "", path_env)
        if found is None:
            return Verdict(interpreter, "", f"{script} runs {interpreter} {arg}: not on PATH")
        verdict = verify_program(found, trusted)
    if verdict.ok:
        return verdict
    return Verdict(interpreter, "", f"the interpreter of {script}: {verdict.why}")


def search_dirs(path_env: str) -> list[str]:
    """The PATH entries searched: absolute ones only (``""``, ``.`` and relative entries name
    the working directory, a classic trap for root)."""
    return [d for d in path_env.split(os.pathsep) if d.startswith("/")]


def find_on_path(command: str, path_env: str) -> str | None:
    """The first PATH entry's `command` that is an executable non-directory, as a shell finds
    it (not yet verified), or None."""
    if not command or "/" in command:
        return None
    for d in search_dirs(path_env):
        candidate = posixpath.join(d, command)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def auditing_uids() -> frozenset[int]:
    """Whom a program the auditor runs as itself may be owned by: root and the auditing euid."""
    return frozenset((0, os.geteuid()))
