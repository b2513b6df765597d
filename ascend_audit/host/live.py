"""The live Host: the real node, every path under --sysroot, commands found on PATH."""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ascend_audit.host.base import (
    DEFAULT_TIMEOUT,
    FILE_CAP,
    OUTPUT_CAP,
    CommandResult,
    FileRead,
    Host,
    ProcessIdentity,
    ProcessInfo,
    StatInfo,
    parse_proc_status,
)
from ascend_audit.host.process_paths import gate_environ, same_root
from ascend_audit.host.procscan import ProcessGap, call_bounded, scan
from ascend_audit.host.trust import (
    auditing_uids,
    find_on_path,
    local_lstat,
    search_dirs,
    stat_info,
    verify_launch,
)
from ascend_audit.redact import allowed_env, redact_argv, redact_env
from ascend_audit.safe_io import (
    listdir_in_root,
    lstat_in_root,
    read_bytes,
    readlink_in_root,
    stat_in_root,
)

MAX_WORKERS = 16
SERVING_MARKERS = ("vllm", "mindie", "mindieservice")
SERVING_ENV_KEYS = (
    "ASCEND_RT_VISIBLE_DEVICES",
    "ASCEND_LAUNCH_BLOCKING",
    "TASK_QUEUE_ENABLE",
    "PYTORCH_NPU_ALLOC_CONF",
    "HCCL_CONNECT_TIMEOUT",
    "HCCL_EXEC_TIMEOUT",
    "HCCL_IF_IP",
    "HCCL_SOCKET_IFNAME",
    "HCCL_BUFFSIZE",
    "VLLM_USE_V1",
    "RANK_TABLE_FILE",
    "RANKTABLEFILE",
    "DISAGGREGATED_PREFILL_RANK_TABLE_PATH",
    "HCCL_RDMA_TIMEOUT",
    "HCCL_RDMA_RETRY_CNT",
    "LD_LIBRARY_PATH",
    "HCCL_IF_BASE_PORT",
    "GLOO_SOCKET_IFNAME",
    "TP_SOCKET_IFNAME",
    "VLLM_HOST_IP",
    "NPU_MEMORY_FRACTION",
    "ATB_HOME_PATH",
    "MINDIE_LLM_HOME_PATH",
    "ATB_SPEED_HOME_PATH",
    "ASCEND_TOOLKIT_HOME",
)
# What a probe run as the serving user keeps of that process's environment: where its programs
# and libraries are, and the CANN variables (set_env.sh), nothing else.
PROBE_ENV_KEYS = (
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "TOOLCHAIN_HOME",
    "LANG",
    "LC_ALL",
)
PROBE_ENV_PREFIXES = ("ASCEND_", "CANN_", "ATB_", "ASDOPS_")
ENVIRON_CAP = 1024 * 1024
NOBODY = 65534  # whom a root service's probe runs as when nothing it needs is root's alone
PROBE_OUTPUT_CAP = 2 * 1024 * 1024


def probe_environ(environ: dict[str, str]) -> dict[str, str]:
    """The part of a serving process's environment a probe run as its user is given."""
    return {
        k: v for k, v in environ.items() if k in PROBE_ENV_KEYS or k.startswith(PROBE_ENV_PREFIXES)
    }


def parse_environ(data: bytes) -> dict[str, str]:
    """/proc/PID/environ: NUL-separated KEY=VALUE entries."""
    out: dict[str, str] = {}
    for entry in data.split(b"\0"):
        key, sep, value = entry.partition(b"=")
        if sep and key:
            out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    return out


def _denied(res: CommandResult) -> bool:
    """Whether a command's output says a read was refused for want of permission."""
    text = res.stdout[-65536:] + res.stderr[-65536:]
    return "Permission denied" in text or "PermissionError" in text


def _drain(stream: Any, sink: bytearray, cap: int, overflow: threading.Event) -> None:
    """Read a pipe to EOF, keeping at most `cap` bytes; flag an overflow so the caller can stop."""
    try:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                return
            room = cap - len(sink)
            if room > 0:
                sink.extend(chunk[:room])
            if len(chunk) > room:
                overflow.set()
    except (OSError, ValueError):
        return


_RUNNING: set[int] = set()  # process groups of the commands running now
_RUNNING_LOCK = threading.Lock()
# Set once the audit is interrupted: a worker thread that was about to start a command must
# not start it (its hung child would outlive the kill and hold the interpreter's exit, which
# joins the pool's threads).
_STOPPING = threading.Event()


def kill_running_children() -> None:
    """SIGKILL every command's process group still running, and start no command after
    (Ctrl-C, SIGTERM: the audit is ending)."""
    _STOPPING.set()
    with _RUNNING_LOCK:
        groups = list(_RUNNING)
    for pgid in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def resolve_program(argv0: str, path_env: str, trusted: frozenset[int]) -> tuple[str, str, str]:
    """(status, the path to exec, why not): "ok" with the verified real file, "missing", or
    "refused" naming the entry another user could replace (see host/trust.py)."""
    if "/" not in argv0:
        found = find_on_path(argv0, path_env)
        if found is None:
            return "missing", "", "not found on PATH"
    elif local_lstat(argv0) is None:
        return "missing", "", f"{argv0}: no such file"
    else:
        found = argv0
    verdict = verify_launch(found, trusted, path_env)
    if not verdict.ok:
        return "refused", "", verdict.refused
    return "ok", verdict.real, ""


def execute(
    argv: list[str] | tuple[str, ...],
    timeout: float,
    env: dict[str, str] | None = None,
    cap: int = OUTPUT_CAP,
    identity: ProcessIdentity | None = None,
) -> CommandResult:
    """Run a command without a shell: bounded time and output, whole process group; argv[0]
    is found on env's PATH and verified first (a program another user could replace is
    "refused", never run); with `identity`, as that user (uid, gid, groups set before exec)."""
    argv_t = tuple(argv)
    shown = tuple(redact_argv(argv_t))
    child_env = dict(os.environ if env is None else env)
    path_env = child_env.get("PATH", os.defpath)
    child_env["PATH"] = os.pathsep.join(search_dirs(path_env))
    trusted = auditing_uids() | ({identity.uid} if identity is not None else set())
    status, real, why = resolve_program(argv_t[0] if argv_t else "", path_env, trusted)
    if status != "ok":
        return CommandResult(shown, status, error=why)
    if _STOPPING.is_set():
        return CommandResult(shown, "error", error="not started: the audit is being interrupted")
    start = time.monotonic()
    creds: dict[str, Any] = {}
    if identity is not None:
        creds = {
            "user": identity.uid,
            "group": identity.gid,
            "extra_groups": list(identity.groups),
            "cwd": "/",
        }
    try:
        proc = subprocess.Popen(
            list(argv_t),
            executable=real,  # the verified file itself: no second PATH search, no link swap
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group, so a forked child dies with it
            env=child_env,
            close_fds=True,
            **creds,
        )
    except FileNotFoundError:
        return CommandResult(shown, "missing", error="not found")
    except OSError as exc:
        return CommandResult(shown, "error", error=f"{type(exc).__name__}: {exc}")

    with _RUNNING_LOCK:
        _RUNNING.add(proc.pid)
        stopping = _STOPPING.is_set()  # the kill listed the groups before this one was added
    try:
        if stopping:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        return _wait(proc, shown, start, timeout, cap)
    except BaseException:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        raise
    finally:
        with _RUNNING_LOCK:
            _RUNNING.discard(proc.pid)


def _wait(
    proc: subprocess.Popen[bytes], shown: tuple[str, ...], start: float, timeout: float, cap: int
) -> CommandResult:
    """Collect a started command's output within its timeout and output cap."""
    out, err = bytearray(), bytearray()
    overflow = threading.Event()
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out, cap, overflow), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err, cap, overflow), daemon=True),
    ]
    for t in readers:
        t.start()

    def kill_group() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    deadline = start + timeout
    status, error = "", ""
    while True:
        rc = proc.poll()
        if rc is not None:
            break
        if overflow.is_set():
            kill_group()
            proc.wait()
            status, error = "error", f"output exceeded {cap // (1024 * 1024)} MiB; stopped"
            break
        if time.monotonic() >= deadline:
            kill_group()
            proc.wait()
            status, error = "timeout", f"killed after {timeout:g} s"
            break
        time.sleep(0.005)
    # A child that outlives its parent can hold the pipes open: give the readers a moment, then
    # kill what is left of the group so the read ends.
    for t in readers:
        t.join(timeout=max(0.05, min(0.5, deadline - time.monotonic())))
    if any(t.is_alive() for t in readers):
        kill_group()
        for t in readers:
            t.join(timeout=1.0)
    for pipe in (proc.stdout, proc.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    rc = proc.returncode
    if not status:
        if rc is not None and rc < 0:
            status, error = "signal", f"signal {-rc}"
        else:
            status = "ok" if rc == 0 else "nonzero"
    return CommandResult(
        shown,
        status,
        rc,
        out.decode("utf-8", errors="replace"),
        err.decode("utf-8", errors="replace"),
        (time.monotonic() - start) * 1000,
        overflow.is_set(),
        error,
    )


class LiveHost(Host):
    """The node this process runs on; files under `sysroot`, commands on `PATH`."""

    kind = "live"

    def __init__(
        self,
        sysroot: str = "/",
        timeout: float = DEFAULT_TIMEOUT,
        max_workers: int = MAX_WORKERS,
        environ: dict[str, str] | None = None,
    ) -> None:
        self.sysroot = os.path.abspath(sysroot or "/")
        self.timeout = timeout
        self.max_workers = max_workers
        self._environ = dict(os.environ if environ is None else environ)
        self._cache: dict[tuple[str, ...], CommandResult] = {}
        self._lock = threading.Lock()
        self._scan_lock = threading.Lock()
        self._process_table: list[ProcessInfo] | None = None
        self._process_gaps: list[ProcessGap] = []

    # paths -------------------------------------------------------------------------------
    def _joined(self, path: str) -> str:
        rel = os.path.normpath("/" + path).lstrip("/")
        return os.path.join(self.sysroot, rel) if rel else self.sysroot

    def local(self, path: str) -> str:
        """Local filesystem path of a node path; absolute links are followed inside the sysroot."""
        if self.sysroot == "/":
            return self._joined(path)
        return self._joined(self.realpath(path))

    def read_text(self, path: str, limit: int = FILE_CAP) -> FileRead:
        try:
            data = read_bytes(self.sysroot, path, limit)
        except OSError as exc:
            return FileRead(path, None, exc.strerror or type(exc).__name__)
        truncated = len(data) > limit
        return FileRead(path, data[:limit].decode("utf-8", errors="replace"), None, truncated)

    def listdir(self, path: str, limit: int | None = None) -> list[str] | None:
        try:
            return sorted(listdir_in_root(self.sysroot, path, limit))
        except OSError:
            return None

    def realpath(self, path: str) -> str:
        # Resolve link by link so absolute targets stay inside the sysroot.
        parts = [p for p in os.path.normpath("/" + path).split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join([*resolved, part])
            try:
                target = readlink_in_root(self.sysroot, candidate)
            except OSError:
                resolved.append(part)
                continue
            hops += 1
            if hops > 40:
                return candidate
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p and p != "."] + parts
        return "/" + "/".join(resolved)

    def readlink(self, path: str) -> str | None:
        try:
            return readlink_in_root(self.sysroot, os.path.normpath("/" + path))
        except OSError:
            return None

    def stat(self, path: str) -> StatInfo | None:
        try:
            st = stat_in_root(self.sysroot, path)
        except OSError:
            return None
        return stat_info(st)

    def lstat(self, path: str) -> StatInfo | None:
        try:
            return stat_info(lstat_in_root(self.sysroot, path))
        except OSError:
            return None

    # commands ----------------------------------------------------------------------------
    def which(self, command: str) -> str | None:
        """Where PATH finds `command` (absolute entries only); running it verifies it."""
        return find_on_path(command, self._environ.get("PATH", os.defpath))

    def _run_one(self, argv: tuple[str, ...], timeout: float) -> CommandResult:
        return execute(argv, timeout, env=self._environ)

    def run_many(
        self, argvs: Sequence[Sequence[str]], timeout: float | None = None
    ) -> list[CommandResult]:
        """Run commands concurrently; the whole batch shares one deadline of `timeout`, so 128
        hung per-NPU queries take one timeout, not 128 / workers of them."""
        wanted = [tuple(a) for a in argvs]
        t = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + t
        with self._lock:
            todo = list(dict.fromkeys(a for a in wanted if a not in self._cache))
        if todo:
            if len(todo) == 1:
                done = [self._run_one(todo[0], t)]
            else:
                # imported here: it pulls in logging, and an audit of given inputs runs no batch
                from concurrent.futures import ThreadPoolExecutor

                workers = min(self.max_workers, len(todo))
                pool = ThreadPoolExecutor(workers, thread_name_prefix="ascend-audit-cmd")
                try:
                    done = list(pool.map(lambda a: self._run_before(a, t, deadline), todo))
                except BaseException:  # Ctrl-C, SIGTERM: do not wait for the commands
                    kill_running_children()
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
                pool.shutdown()
            with self._lock:
                self._cache.update(zip(todo, done))
        with self._lock:
            return [self._cache[a] for a in wanted]

    def _run_before(self, argv: tuple[str, ...], timeout: float, deadline: float) -> CommandResult:
        left = deadline - time.monotonic()
        if left <= 0.05:
            return CommandResult(
                tuple(redact_argv(argv)),
                "timeout",
                error=f"not started: its batch's shared deadline of {timeout:g} s had passed",
            )
        return self._run_one(argv, left)

    # node identity and processes --------------------------------------------------------
    def env(self) -> dict[str, str]:
        """The allowlisted variables of the audit's environment (redact.ENV_ALLOWLIST_*),
        redacted: what checks read, and all that `collect` records."""
        return allowed_env(self._environ)

    def identity(self) -> dict[str, str]:
        hostname = self.read_text("/etc/hostname")
        os_release = self.read_text("/etc/os-release")
        pretty = ""
        for line in (os_release.text or "").splitlines():
            if line.startswith("PRETTY_NAME="):
                pretty = line.split("=", 1)[1].strip().strip('"')
        kernel = self.read_text("/proc/sys/kernel/osrelease")
        if self.sysroot == "/":
            name, kern, arch = platform.node(), platform.release(), platform.machine()
        else:
            name = (hostname.text or "").strip() or "unknown"
            kern = (kernel.text or "").strip() or "unknown"
            # Distribution kernels name their architecture last: 5.10.0-216.oe2203sp4.aarch64
            suffix = kern.rsplit(".", 1)[-1]
            arch = suffix if suffix in ("aarch64", "x86_64") else "unknown"
        return {
            "hostname": name,
            "kernel": kern,
            "os": pretty or "unknown",
            "arch": arch,
            "sysroot": self.sysroot,
        }

    def processes(self) -> list[ProcessInfo]:
        """The node's processes, read under one deadline (the host's timeout); a process whose
        /proc files did not answer in time is left out and named by process_gaps()."""
        # One scan per run: a hung process costs one deadline, not one per caller.
        with self._scan_lock:
            if self._process_table is None:
                found, gaps = scan(self._process_pids(), self._read_process, self.timeout)
                self._process_table, self._process_gaps = found, gaps
            return list(self._process_table)

    def process_gaps(self) -> list[ProcessGap]:
        return list(self._process_gaps)

    def _process_pids(self) -> list[int]:
        if self.sysroot != "/":
            return []  # processes of a fake node are not this machine's
        try:
            import psutil

            return sorted(psutil.pids())
        except Exception:  # psutil absent or /proc unreadable: no table
            return []

    def _read_process(self, pid: int, note: Callable[[str], None]) -> ProcessInfo | None:
        """One process, as psutil reads it; `note` names the /proc file about to be read (a
        read of cmdline or environ blocks while the process holds its mmap lock)."""
        import psutil

        try:
            p = psutil.Process(pid)
            note(f"/proc/{pid}/stat")
            name = p.name()
            ppid = p.ppid()
            note(f"/proc/{pid}/exe")
            try:
                exe = p.exe()
            except (psutil.AccessDenied, psutil.ZombieProcess):
                exe = ""
            note(f"/proc/{pid}/cmdline")
            cmd = tuple(redact_argv(p.cmdline()))
            note(f"/proc/{pid}/status")
            try:
                user = p.username()
            except (psutil.AccessDenied, KeyError):
                user = ""
            try:
                aff = tuple(p.cpu_affinity())
            except (psutil.Error, AttributeError, OSError):
                aff = ()
            serving = any(k in " ".join(cmd).lower() for k in SERVING_MARKERS)
            environ: dict[str, str] = {}
            if serving:
                note(f"/proc/{pid}/environ")
                environ = self.serving_environ(pid)
            return ProcessInfo(
                pid, name or "", exe or "", cmd, user or "", aff, environ=environ, ppid=ppid
            )
        except (psutil.Error, OSError):
            return None

    def serving_environ(self, pid: int) -> dict[str, str]:
        """The serving-relevant part of a process's environment, redacted."""
        try:
            import psutil

            environ = psutil.Process(pid).environ()
        except Exception:
            return {}
        return redact_env({k: v for k, v in environ.items() if k in SERVING_ENV_KEYS})

    def process_identity(self, pid: int) -> ProcessIdentity | None:
        """None also when the process's /proc files do not answer within the host's timeout."""
        answered, ident = call_bounded(lambda: self._read_identity(int(pid)), self.timeout)
        return ident if answered else None

    def _read_identity(self, pid: int) -> ProcessIdentity | None:
        try:
            exe = os.readlink(self._joined(f"/proc/{pid}/exe"))
        except (OSError, ValueError):
            exe = ""
        status = self.read_text(f"/proc/{pid}/status", 65536)
        if status.text is None:
            return None
        return parse_proc_status(pid, exe, status.text)

    def run_as(
        self,
        argv: list[str] | tuple[str, ...],
        timeout: float,
        identity: ProcessIdentity | None,
        extra_env: dict[str, str] | None = None,
        needs_devices: bool = False,
    ) -> CommandResult:
        if identity is None:
            return execute(argv, timeout, env=self._probe_env(self._environ, extra_env))
        path = f"/proc/{identity.pid}/environ"
        try:
            answered, got = call_bounded(
                lambda: read_bytes(self.sysroot, path, ENVIRON_CAP), self.timeout
            )
        except OSError:
            answered, got = True, b""
        if not answered:
            return CommandResult(
                tuple(redact_argv(argv)),
                "timeout",
                error=f"not started: process {identity.pid} did not answer {path} "
                f"within {self.timeout:g} s",
            )
        source = probe_environ(parse_environ((got or b"")[:ENVIRON_CAP]))
        proc_dir = self._joined(f"/proc/{identity.pid}")
        shared = same_root(proc_dir)
        run_identity: ProcessIdentity | None = identity
        if os.geteuid() != 0:
            run_identity = None  # only root can become the serving user; run as ourselves
        notes: list[str] = []
        if run_identity is not None and run_identity.uid == 0 and not needs_devices and shared:
            # a root service's command first runs as nobody: root only when that cannot work
            nobody = ProcessIdentity(identity.pid, identity.exe, NOBODY, NOBODY, ())
            res = self._run_gated(argv, timeout, source, proc_dir, shared, nobody, extra_env)
            if res.status == "timeout" or (res.status in ("ok", "nonzero") and not _denied(res)):
                return replace(res, notes=(*res.notes, f"ran as nobody (uid {NOBODY}), not root"))
            notes.append(
                f"ran as root: as nobody (uid {NOBODY}) it could not read what it needs "
                f"({res.status}{': permission denied' if _denied(res) else ''})"
            )
        elif run_identity is not None and run_identity.uid == 0:
            why = "it opens the NPU devices" if needs_devices else "the service runs in its own "
            why += "" if needs_devices else "root or mount namespace, which only root may enter"
            notes.append(f"ran as root, the service's user: {why}")
        res = self._run_gated(argv, timeout, source, proc_dir, shared, run_identity, extra_env)
        return replace(res, notes=(*notes, *res.notes)) if notes else res

    def _probe_env(
        self, source: dict[str, str], extra_env: dict[str, str] | None
    ) -> dict[str, str]:
        env = probe_environ(source)
        env.setdefault("PATH", os.defpath)
        env.update(extra_env or {})
        return env

    def _run_gated(
        self,
        argv: list[str] | tuple[str, ...],
        timeout: float,
        source: dict[str, str],
        proc_dir: str,
        shared: bool,
        identity: ProcessIdentity | None,
        extra_env: dict[str, str] | None,
    ) -> CommandResult:
        """Run `argv` as `identity` with the serving process's environment, each path in it
        verified in that process's root for the user the command runs as (process_paths.py)."""
        trusted = {0, identity.uid if identity is not None else os.geteuid()}
        gated = gate_environ(source, proc_dir + "/root", shared, trusted)
        env = self._probe_env(gated.env, extra_env)
        res = execute(argv, timeout, env=env, cap=PROBE_OUTPUT_CAP, identity=identity)
        return replace(res, notes=gated.notes) if gated.notes else res

    def udev(self, subsystem: str) -> list[dict[str, Any]] | None:
        if self.sysroot != "/":
            return None  # libudev always reads the real /sys
        try:
            import pyudev

            ctx = pyudev.Context()
            devices = list(ctx.list_devices(subsystem=subsystem))
        except Exception:
            return None
        out = []
        for dev in devices:
            attrs: dict[str, str] = {}
            for key in dev.attributes.available_attributes:
                if key in ("nuse", "config", "remove", "rescan", "reset", "resource") or "/" in key:
                    continue
                try:
                    raw = dev.attributes.get(key)
                except Exception:
                    continue
                if isinstance(raw, bytes) and len(raw) < 4096:
                    attrs[key] = raw.decode("utf-8", errors="replace").strip()
            out.append(
                {
                    "sys_path": dev.sys_path,
                    "sys_name": dev.sys_name,
                    "driver": dev.driver or "",
                    "attributes": attrs,
                    "properties": {k: dev.properties.get(k, "") for k in dev.properties},
                }
            )
        return out

    def input_path(self, path: str) -> str | None:
        return path if os.path.exists(path) else None
