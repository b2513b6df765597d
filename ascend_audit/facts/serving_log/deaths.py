"""How a service dies: wrapped-line prefixes, traceback frames, final exceptions, fatal lines."""

from __future__ import annotations

import re

# Prefixes that wrap a logged line: "(Worker_TP0 pid=5536) ", "[rank0]: ", a compose service
# "name   | ", vLLM's "ERROR 11-10 01:25:12 [file.py:671] " and Ray's "… worker_base.py:572] ".
PREFIX_RE = re.compile(
    r"(?:\((?:[\w.\-]+)(?: [\w.=\-]{1,40})? pid=\d+[^)]{0,60}\) ?"
    r"|\[rank\d+\]: ?"
    # torch's own logging: "E0106 03:23:01.677000 37645 site-packages/torch/x.py:2721] [0/0] "
    r"|[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]\s]{1,300}:\d+\] (?:\[\d+/\d+\] ?)?"
    r"|[A-Za-z][\w.\-]{0,60} +\| "
    r"|(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)(?: +\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)? +"
    r"\[?[\w.\-]+:\d+\] ?)"
)
FRAME_RE = re.compile(r'^\s+File "([^"]{1,400})", line (\d+), in (\S{1,200})')
# An exception class as Python prints it, after its modules if any ("torch._dynamo.exc.").
_MODULES = r"(?:[a-z_]\w*\.){0,6}"
_EXC_CLASS = r"[A-Z]\w{0,80}(?:Error|Exception|Exit|Interrupt|Failure|Fault|Timeout)"
EXC_RE = re.compile(
    r"^(" + _MODULES + r"(?:" + _EXC_CLASS + r"|Exception))"
    r"(?::\s?(.*))?$"  # the message may be long (a dynamo error quotes the whole FX node)
)
# Inside a traceback a module-qualified class is an exception whatever its name
# ("torch._dynamo.exc.Unsupported: Operator does not support running with fake tensors").
DOTTED_EXC_RE = re.compile(r"^((?:[a-z_]\w*\.){1,6}[A-Z]\w{0,80})(?::\s?(.*))?$")
PYTEST_LOC_RE = re.compile(r"^(\S{1,300}\.py):(\d+): \w+$")
SRC_RE = re.compile(r"([\w./\-]{1,200}\.(?:py|cpp|cc|c|h|hpp|ts)):(\d+)")
PTA_TAIL_RE = re.compile(
    r"\[ERROR\] \d{4}-\d\d-\d\d-[\d:.]+ \(PID:\d+, Device:-?\d+, RankID:-?\d+\) "
    r"(ERR\d{5})(.{0,120})"
)
ACCESS_RE = re.compile(r'"(GET|POST|PUT|DELETE) (/\S{0,200}) HTTP/[\d.]+" (\d{3})')
# MindIE's access log: "[Response mindie server, method is GET, uri is /v1/models]
# [status code: 404]"
MINDIE_ACCESS_RE = re.compile(
    r"\[Response mindie server, method is (GET|POST|PUT|DELETE), uri is (/[^\]\s]{0,200})\] "
    r"\[status code: (\d{3})\]"
)
# A C++ daemon's error-level line (MindIE, HCCL, ATB): "[server] [ERROR] [endpoint.cpp:99] : …",
# "[error] [hccl_runner.cpp:132] …". Python logging's "ERROR mm-dd …" lines are not matched: in
# vLLM logs they carry traceback lines, so only their exceptions and codes can be a first cause.
DAEMON_ERROR_RE = re.compile(r"\[(?:ERROR|error|CRITICAL|critical|FATAL|fatal)\]")
# A Python exception a daemon reports inside its own line ("… with exception: NotImplementedError:
# unsupported model type: minicpmv"), and pybind11's frames after it ("At:", innermost first).
EMBEDDED_EXC_RE = re.compile(
    r"\b(?:[Ee]xception|[Ee]rror)(?: is)?: "
    r"(" + _MODULES + _EXC_CLASS + r"): ?(.{0,400})"
)
# The bracketed head of a daemon line: "[2025-…] [38] [452] [server] [ERROR] [http.cpp:163] : "
DAEMON_HEAD_RE = re.compile(r"^(?:\[[^\]]{0,80}\]\s*)+(?::\s*)?")
PYBIND_FRAME_RE = re.compile(r"^\s+(\S{1,400}\.py)\((\d+)\): (\S{1,200})$")
# An uncaught C++ exception: libstdc++ names the thrown type, prints "  what():  <message>" and
# aborts. Ranks aborting at once interleave these lines, so a garbled type is left unnamed.
TERMINATE_RE = re.compile(
    r"terminate called (?:after throwing an instance of '(?:([A-Za-z_][\w:<>]{0,200})')?"
    r"|without an active exception|recursively)"
)
WHAT_RE = re.compile(r"^\s*what\(\):\s+(\S.{0,399})")
# Scripts that only report the environment: a traceback they raise is the script failing, not
# the engine (vllm-ascend#3793: collect_env.py could not import vllm_ascend._version).
TOOL_SCRIPTS = ("collect_env.py",)
TOOL_RUN_RE = re.compile(r"\bpython[\d.]*\s+(?:-m\s+)?\S*collect_env\b")
# Frames of the interpreter's own launcher ("python -m torch.utils.collect_env"): they name no
# owner, the next frame does.
LAUNCHER_FRAMES = ("runpy.py", "<frozen runpy>")
# Fatal kinds that only wrap the failure (a process exited, a server did not start): the first
# cause is the line before them that says why.
WRAPPERS = frozenset(
    (
        "engine_core_failed",
        "worker_failed",
        "engine_core_died",
        "worker_died",
        "exited",
        "mindie_start_failed",
        "mindie_daemon_killed",
        "mindie_job_failed",
        "crashed",
        "models_404",
        "engine_dead",
        "unfinished_traceback",
    )
)
# Fatal kinds after which the engine serves no more: a later 200 is an error streamed back, not
# recovery; only a restart revives it.
TERMINAL = frozenset(("engine_dead", "engine_core_died", "worker_died"))
OP_NAME_RE = re.compile(
    r"\b(?:op(?:_?type|_?name)?|Op ?(?:Type|Name)|kernel(?:_name)?|node)\s*[=:\[]\s*\[?['\"]?"
    r"(?!(?:FUNC|FILE|LINE):)([A-Za-z_][\w.]{1,80})"  # CANN's [FUNC:..] trailer names no operator
    r"|\b(aclnn[A-Z]\w{1,60})\b"
    # torch's fake-tensor pass (dynamo / graph compile) naming the operator it could not run
    r"|\b(?:run meta for|unsupported operator:) ([\w.]{1,80}?)(?:\.default)?(?=\s|$)"
)
# (trigger substring, regex, kind): a line that proves the service died or cannot start.
FATAL: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), k)
    for t, p, k in (
        ("EngineCore failed to start", r"EngineCore failed to start", "engine_core_failed"),
        (
            "Engine core initialization failed",
            r"Engine core initialization failed",
            "engine_core_failed",
        ),
        (
            "EngineCore encountered a fatal error",
            r"EngineCore encountered a fatal error",
            "engine_dead",
        ),
        ("EngineDeadError", r"EngineDeadError\b", "engine_dead"),
        ("WorkerProc hit an exception", r"WorkerProc hit an exception", "worker_failed"),
        ("WorkerProc failed to start", r"WorkerProc failed to start", "worker_failed"),
        ("died unexpectedly", r"Engine core proc \S+ died unexpectedly", "engine_core_died"),
        ("died unexpectedly", r"Worker proc \S+ died unexpectedly", "worker_died"),
        # vLLM V1 executors and clients: "MulitprocExecutor got fatal signal from worker
        # processes, shutting down", "Got fatal signal from worker processes, shutting down"
        ("fatal signal", r"[Gg]ot fatal signal from worker processes", "worker_died"),
        # HCCL communicator creation failed (HCCL's own log, MindIE/ATB runners): no collective
        # can run, so the service cannot serve
        ("HcclCommInitRootInfo", r"HcclCommInitRootInfo\w* fail\w*[^\n]{0,80}", "hccl_init_failed"),
        # Multi-node start-up: HCCL cannot listen on its NIC port (held by a leftover process or
        # another job), HCCL links not established in time, the c10d rendezvous timed out
        # (data/serving_line_classes.toml names the cause class and the checklist of each)
        (
            "specific port[",
            r"listen on ip\[[^\]]{0,80}\] and specific port\[\d+\] fail",
            "hccl_port_busy",
        ),
        (
            "nic listen start failed",
            r"\b(?:host|device) nic listen start failed, port\[\d+\]",
            "hccl_port_busy",
        ),
        (
            "wait socket establish timeout",
            r"wait socket establish timeout(?:, role\[\d+\] rank\[\d+\] timeout\[[^\]]{0,20}\])?",
            "hccl_link_timeout",
        ),
        (
            "waitForInput",
            r"\[c10d\] waitForInput: (?:poll for )?socket SocketImpl\([^)]{0,300}\) "
            r"(?:timed out after \d+ms|returned 0, likely a timeout)",
            "c10d_rendezvous_timeout",
        ),
        (
            "client socket has timed out",
            r"\[c10d\] The client socket has timed out after \d+m?s while trying to connect to "
            r"\([^)]{0,200}\)",
            "c10d_rendezvous_timeout",
        ),
        ("exited with code", r"\b(?:server|process|service) exited with code [1-9]\d*", "exited"),
        (
            "Start mindie server",
            r"\[?Start mindie server\]?\s*\[?(?:fail|failed|error)\]?",
            "mindie_start_failed",
        ),
        ("Warmup failed", r"Warmup failed[^\n]{0,300}", "mindie_warmup_failed"),
        ("Daemon start fail", r"Daemon start fail\w*", "mindie_start_failed"),
        ("Daemon is killing", r"Daemon is killing", "mindie_daemon_killed"),
        ("running job failed", r"running job failed\. exit code: \d+", "mindie_job_failed"),
        ("Service Startup Failed", r"Service Startup Failed", "mindie_start_failed"),
        ("NPU out of memory", r"NPU out of memory\.?[^\n]{0,200}", "npu_oom"),
        ("open device", r"open device \d+ failed", "device_open_failed"),
        (
            "Set visible device failed",
            r"Set visible device failed[^\n]{0,120}",
            "visible_devices_refused",
        ),
        (
            "ASCEND_RT_VISIBLE_DEVICES",
            r"set ASCEND_RT_VISIBLE_DEVICES:\[[^\]]*\] error[^\n]{0,80}",
            "visible_devices_refused",
        ),
        (
            "memory available in /dev/shm",
            r"exceeds memory available in /dev/shm",
            "dev_shm_too_small",
        ),
        ("Segmentation fault", r"Segmentation fault", "crashed"),
        ("Fatal Python error", r"Fatal Python error: \w[^\n]{0,80}", "crashed"),
        ("core dumped", r"core dumped", "crashed"),
    )
]
SHUTDOWN = (
    "Shutdown initiated",
    "Shutting down",
    "shutting down",
    "Received SIGTERM",
    "Received SIGINT",
    "Finished server process",  # uvicorn's last line
    "Stopping worker",
    "[shutdown] ",  # vLLM's shutdown lines since vllm-project/vllm#43707
)
CODE_HINT_RE = re.compile(
    r"ERR\d|MIE\d|E[A-Z]\d{4}|E[1-9]\d{4}|error code|result =|failed: \d|retCode=|ret ?[=:] ?\d"
    r"|errNo\[0x|error:\s?\d"
)
