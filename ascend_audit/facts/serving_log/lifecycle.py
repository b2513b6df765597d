"""How far the service got (stages), how it died, and the codes and versions on the way."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ascend_audit.facts.serving_log.deaths import (
    ACCESS_RE,
    CODE_HINT_RE,
    DAEMON_ERROR_RE,
    DAEMON_HEAD_RE,
    DOTTED_EXC_RE,
    EMBEDDED_EXC_RE,
    EXC_RE,
    FATAL,
    FRAME_RE,
    LAUNCHER_FRAMES,
    MINDIE_ACCESS_RE,
    OP_NAME_RE,
    PREFIX_RE,
    PTA_TAIL_RE,
    PYBIND_FRAME_RE,
    PYTEST_LOC_RE,
    SHUTDOWN,
    SRC_RE,
    TERMINAL,
    TERMINATE_RE,
    TOOL_RUN_RE,
    TOOL_SCRIPTS,
    WHAT_RE,
    WRAPPERS,
)
from ascend_audit.facts.serving_log.engines import ENGINES, engine_kind
from ascend_audit.facts.serving_log.model import STAGES, LogHit, Scalar
from ascend_audit.facts.serving_log.operator_failures import operator_failure
from ascend_audit.facts.serving_log.stack import VERSION_RULES
from ascend_audit.facts.serving_log.values import clip, excerpt

if TYPE_CHECKING:
    from ascend_audit.facts.serving_log.scan import Scan

# (trigger, regex, stage, value) for the stage markers that are not already rules above.
STAGE_RULES: list[tuple[str, re.Pattern[str], str]] = [
    (t, re.compile(p), st)
    for t, p, st in (
        ("non-default args", r"non-default args:", "launched"),
        ("args: Namespace(", r"args: Namespace\(", "launched"),
        ("API server version", r"vLLM API server version", "launched"),
        ("Platform plugin ascend is activated", r"Platform plugin ascend is activated", "launched"),
        ("Start mindie server", r"Start mindie server", "launched"),
        ("restart mindie service daemon", r"restart mindie service daemon", "launched"),
        ("LLM engine", r"Initializing an? (?:V\d )?LLM engine", "configured"),
        # workers up and loading: the engine was configured (the paste may lack that line)
        ("Starting to load model", r"Starting to load model", "configured"),
        ("Loading weights took", r"Loading weights took", "weights_loaded"),
        ("Loading model weights took", r"Loading model weights took", "weights_loaded"),
        ("Model loading took", r"Model loading took", "weights_loaded"),
        ("KV cache size:", r"KV cache size: [\d,]+ tokens", "kv_sized"),
        ("blocks:", r"# (?:npu|NPU|gpu|GPU|cuda|CUDA) blocks: \d+", "kv_sized"),
        ("init engine", r"init engine \(profile, create kv cache", "kv_sized"),
        ("Graph capturing finished", r"Graph capturing finished", "graphs_captured"),
        (
            "is compiled successfully",
            r"Batchsize \d+ is compiled successfully: (\d+)/\1\b",
            "graphs_captured",
        ),
        ("Application startup complete", r"Application startup complete", "server_up"),
        ("Uvicorn running on", r"Uvicorn running on", "server_up"),
        ("Starting vLLM API server", r"Starting vLLM API server", "server_up"),
        ("Daemon start success", r"Daemon start success", "server_up"),
        ("throughput:", r"Avg (?:prompt|generation) throughput: [\d.]+", "serving"),
        ("Generated text:", r"Generated text:", "serving"),
        ("Added request", r"Added request (?:chatcmpl|cmpl|embd)-", "serving"),
        ("Processed prompts", r"Processed prompts: +100%", "serving"),
    )
]


# Functions that capture graphs (vLLM / vllm-ascend model runners, torch_npu's NPUGraph): a
# traceback through one is a death during graph capture, with or without a progress bar.
_REPEATED_RE = re.compile(r"(.+?)\1+")
CAPTURE_FRAME_RE = re.compile(r"_?capture(?:_model|_begin|_end|_aclgraphs?|_cudagraphs?)$")


class Life:
    """The lifecycle part of a scan: stages, deaths, exceptions, error codes, versions."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        self.stage_idx = -1
        self.stage_seen: set[str] = set()
        self.in_tb = False
        self.frame: tuple[str, str] | None = None
        self.exc: LogHit | None = None
        self.exc_where: str | None = None
        self.exc_name = ""
        self.death: LogHit | None = None
        self.died_at = 0  # line of the last fatal event (0: none)
        self.progress_after = False
        self.shutdown = False  # a graceful shutdown was logged (after a death it changes nothing)
        self.shutdown_at = 0  # line of the first shutdown line of this run (0: none)
        self.serving = 0
        self.models_404 = 0
        self.codes: dict[tuple[str, str], int] = {}
        self.operators: list[str] = []
        self.engine_votes: dict[str, int] = {}
        self.votes = 0
        self.cann_block = False
        self.collect_env = False
        self.block_until = 0  # error block: the scanner reads every line up to here
        self.code_until = 0  # an error code's block: operators named up to here are the failed ones
        # The first line since the last progress that says why (an exception, a code, a daemon's
        # error line, a fatal marker that is not a wrapper), and where it was raised.
        self.cause: LogHit | None = None
        self.cause_where: str | None = None
        self.pybind_at = False  # an "At:" block follows the last exception
        self.terminal = False  # the engine is dead for good: only a restart revives it
        self.tb_open: tuple[int, str] | None = None  # a traceback whose exception is not seen yet
        self.op_failure: LogHit | None = None  # an operator-level failure in a death's block
        self.abort_at = 0  # line of the last uncaught C++ exception: its what() follows
        self.abort_name = ""
        # Whether the open traceback is a reporting script's (collect_env.py), from its outermost
        # frame; None: no frame yet. tool_run: such a script was started and no engine line since.
        self.tb_tool: bool | None = None
        self.tool_run = False
        self.tool_exc_at = 0  # line of a reporting script's exception

    def stage(self, name: str, lineno: int, text: str) -> None:
        idx = STAGES.index(name)
        self.tool_run = False
        if name not in self.stage_seen:
            self.stage_seen.add(name)
            self.scan.hit(f"stage_{name}", "lifecycle", name, lineno, text)
        if lineno != self.died_at and idx > self.stage_idx:
            self.cause = None  # progress: an earlier error line did not stop the service
            self.tb_open = None
        if idx <= 1 and (
            (self.died_at and lineno > self.died_at)
            or (self.shutdown and lineno > self.shutdown_at)
        ):
            # A new launch after a death or a shutdown: a restart; an earlier death stays in
            # `deaths`, and the new run's own deaths count again.
            self.shutdown = False
            self.shutdown_at = 0
            self.died_at = 0
            self.exc = None
            self.exc_where = None
            self.death = None
            self.cause = None
            self.terminal = False
            self.op_failure = None
            self.stage_idx = idx
            return
        if idx >= 5:
            self.progress()
        self.stage_idx = max(self.stage_idx, idx)

    def fatal(self, kind: str, lineno: int, text: str, value: Scalar = None) -> None:
        if self.shutdown:
            return
        self.scan.hit(kind, "deaths", value if value is not None else kind, lineno, text)
        if kind not in WRAPPERS:
            self.candidate(lineno, text, value if value is not None else kind)
        self.died_at = lineno
        self.progress_after = False
        self.terminal = self.terminal or kind in TERMINAL
        if self.death is None or self.death.signal not in ("final_exception",):
            self.death = LogHit(
                kind, value if value is not None else kind, self.scan.source, lineno, text
            )
        self.block_until = max(self.block_until, lineno + 64)

    def progress(self) -> None:
        """The service did something after a death: the death did not end it (unless terminal)."""
        if self.died_at and not self.terminal:
            self.progress_after = True

    def candidate(self, lineno: int, text: str, value: Scalar, where: str | None = None) -> None:
        """A line that may be the first cause of a death that follows."""
        if self.cause is None and not self.shutdown:
            self.cause = LogHit("first_cause", value, self.scan.source, lineno, text)
            self.cause_where = where

    def line(self, lineno: int, line: str) -> None:
        pos = 0
        while True:
            m = PREFIX_RE.match(line, pos)
            if not m or m.end() == pos:
                break
            pos = m.end()
        body = line[pos:] if pos else line
        if self.tool_exc_at and lineno - self.tool_exc_at <= 2 and PTA_TAIL_RE.search(body):
            return  # torch_npu's exit hook reporting the script's exception (ERR99999)
        if self.votes < 64:
            for names in ENGINES:
                if any(n in body for n in names[1]):
                    self.engine_votes[names[0]] = self.engine_votes.get(names[0], 0) + 1
                    self.votes += 1
                    break
        self._codes(lineno, line, body)
        if self.pybind_at and self._pybind(body):
            return
        if body.lstrip().startswith('File "'):
            fm = FRAME_RE.match(body)
            if fm:
                self.frame = (fm.group(1), fm.group(2))
                base = fm.group(1).rsplit("/", 1)[-1]
                if self.tb_tool is None and base not in LAUNCHER_FRAMES:
                    self.tb_tool = base in TOOL_SCRIPTS
                if CAPTURE_FRAME_RE.match(fm.group(3)):  # a traceback through graph capture
                    self.scan.hit("capture_frame", "graph", fm.group(3), lineno, clip(body))
                self.block_until = max(self.block_until, lineno + 64)
                return
        if "Traceback (most recent call last)" in body:
            if not body.startswith((" ", "\t")):
                self._cut_traceback()  # a traceback still open was cut: that is how it died
                self.in_tb = True
                self.frame = None
                self.tb_tool = None
                self.tb_open = (lineno, excerpt(line, 0, len(line)))
            self.block_until = max(self.block_until, lineno + 400)
            return
        if body.startswith("E   "):  # pytest's report of the raised exception
            body = body[1:].lstrip()
            self.in_tb = True
        elif self.exc is not None and self.exc_where is None and body.endswith(self.exc_name):
            pm = PYTEST_LOC_RE.match(body)
            if pm:  # pytest: "path/worker.py:227: AssertionError"
                self.exc_where = f"{pm.group(1)}:{pm.group(2)}"
                return
        if "terminate called" in body:
            tm = TERMINATE_RE.search(body)
            if tm:
                self._abort(tm, lineno, line)
        elif self.abort_at and "what():" in body and lineno - self.abort_at <= 8:
            wm = WHAT_RE.match(body)
            if wm:
                self._what(clip(wm.group(1).strip()))
        if body[:1].isalpha():
            em = EXC_RE.match(body.rstrip())
            if em is None and self.in_tb:
                em = DOTTED_EXC_RE.match(body.rstrip())
            if em and (self.in_tb or em.group(2)):
                self._exception(em, lineno, line, body)
        if ("rror]" in body or "RROR]" in body or "ATAL]" in body) and DAEMON_ERROR_RE.search(body):
            self._daemon_error(lineno, line, body)
        fatal_here = False
        for trigger, rx, kind in FATAL:
            if trigger in body:
                fm2 = rx.search(body)
                if fm2:
                    fatal_here = True
                    self.fatal(kind, lineno, excerpt(line, 0, len(line)), clip(fm2.group(0)))
        if "[ERROR]" in body and "ERR" in body:
            tm = PTA_TAIL_RE.search(body)
            if tm:
                self.fatal("torch_npu_error", lineno, excerpt(line, 0, len(line)), tm.group(1))
        if not fatal_here and any(s in body for s in SHUTDOWN):  # "…died, shutting down" is no
            # graceful shutdown
            if not self.shutdown:
                if not body.startswith((" ", "\t")):
                    self._cut_traceback()  # a traceback left open before the stop was cut
                self.shutdown, self.shutdown_at = True, lineno
            self.scan.hit("shutdown", "lifecycle", "shutdown", lineno, excerpt(line, 0, len(line)))
        for trigger, rx, st in STAGE_RULES:
            if trigger in body and rx.search(body):
                self.stage(st, lineno, excerpt(line, 0, len(line)))
        if "HTTP/" in body:
            am = ACCESS_RE.search(body)
            if am:
                self.access(am.group(2), am.group(3), lineno, line)
        elif "[status code: " in body:
            am = MINDIE_ACCESS_RE.search(body)
            if am:
                self.access(am.group(2), am.group(3), lineno, line)
        if (self.died_at and lineno <= self.block_until) or lineno <= self.code_until:
            om = OP_NAME_RE.search(body)
            if om:
                self._operator(next((g for g in om.groups() if g), None))
            if self.died_at and self.op_failure is None:
                self.failed_operator(lineno, line)
        for trigger, rx, name in VERSION_RULES:
            if trigger in body:
                vm = rx.search(body)
                if vm:
                    self.scan.hit(f"version_{name}", "versions", vm.group(1), lineno, clip(body))
        if "collect_env" in body and TOOL_RUN_RE.search(body):
            self.tool_run = True
        if body.startswith("CANN:") or body.startswith("Collecting environment information"):
            self.collect_env = True
            self.tool_run = self.tool_run or body.startswith("Collecting")
            self.cann_block = body.startswith("CANN:")
        elif self.cann_block and body.startswith("version="):
            self.scan.hit("version_cann", "versions", body[8:].strip(), lineno, clip(body))
            self.cann_block = False

    def failed_operator(self, lineno: int, line: str) -> None:
        """Keep the line as the death's operator failure when it states one (no code needed)."""
        found = operator_failure(line)
        if found is not None:
            text = excerpt(line, 0, len(line))
            self.op_failure = LogHit("operator_failure", found[0], self.scan.source, lineno, text)
            self._operator(found[1])

    def _operator(self, name: str | None) -> None:
        """Keep an operator named in an error block once ("_C::x" and "_C.x" are one)."""
        seen = {o.replace("::", ".") for o in self.operators}
        if name and len(self.operators) < 16 and name.replace("::", ".") not in seen:
            self.operators.append(name)

    def _pybind(self, body: str) -> bool:
        """pybind11's "At:" frames after an exception a daemon reported: the first is where."""
        if body.strip() == "At:":
            return True
        fm = PYBIND_FRAME_RE.match(body)
        self.pybind_at = False
        if fm is None:
            return False
        where = f"{fm.group(1)}:{fm.group(2)}"
        if self.exc is not None and self.exc_where is None:
            self.exc_where = where
        if self.cause is not None and self.cause_where is None:
            self.cause_where = where
        return True

    def _daemon_error(self, lineno: int, line: str, body: str) -> None:
        """A C++ daemon's error line: a first-cause candidate; an exception inside it is one."""
        text = excerpt(line, 0, len(line))
        em = EMBEDDED_EXC_RE.search(body)
        if em is not None and not EXC_RE.match(body.rstrip()):
            self._exception(em, lineno, line, body)
            self.pybind_at = True
        self.candidate(lineno, text, _message(body))

    def access(self, path: str, status: str, lineno: int, line: str) -> None:
        if status.startswith("2") and not path.startswith(("/health", "/metrics", "/ping")):
            self.serving += 1
            if not self.died_at:
                self.cause = None  # it served after that error line
            if self.serving == 1:
                self.stage("serving", lineno, excerpt(line, 0, len(line)))
            else:
                self.progress()
        elif status == "404" and path.startswith("/v1/models"):
            self.models_404 += 1
            if self.models_404 == 3:
                self.fatal("models_404", lineno, excerpt(line, 0, len(line)), "GET /v1/models 404")
        elif status.startswith("5"):
            self.scan.hit("http_5xx", "deaths", status, lineno, excerpt(line, 0, len(line)))

    def _exception(self, em: re.Match[str], lineno: int, line: str, body: str) -> None:
        name, msg = em.group(1), (em.group(2) or "").strip()
        where = None
        if self.frame is not None:
            where = f"{self.frame[0]}:{self.frame[1]}"
        else:
            sm = SRC_RE.search(msg)
            if sm:
                where = f"{sm.group(1)}:{sm.group(2)}"
        tool = self._tool_tb()
        self.in_tb = False
        self.frame = None
        self.tb_open = None
        self.tb_tool = None
        text = clip(f"{name}: {msg}" if msg else name)
        if tool:  # the reporting script failed: it says nothing of the engine's lifecycle
            at = f" at {where}" if where else ""
            self.scan.hit("tool_traceback", "lifecycle", text + at, lineno, clip(body))
            self.tool_exc_at = lineno
            return
        if name in ("KeyboardInterrupt", "SystemExit") or self.shutdown:
            return
        self._raise(text, name, where, lineno, line)
        self.terminal = self.terminal or name.endswith("EngineDeadError")

    def _raise(self, text: str, name: str, where: str | None, lineno: int, line: str) -> None:
        """The process ended on this exception: the final one, and a first-cause candidate."""
        hit = LogHit("final_exception", text, self.scan.source, lineno, excerpt(line, 0, len(line)))
        self.scan.hit("final_exception", "deaths", text, lineno, hit.text)
        self.candidate(lineno, hit.text, text, where)
        self.exc, self.exc_where, self.exc_name = hit, where, name
        self.death = hit
        self.died_at = lineno
        self.progress_after = False
        self.block_until = max(self.block_until, lineno + 64)

    def _tool_tb(self) -> bool:
        return self.tb_tool if self.tb_tool is not None else self.tool_run

    def _abort(self, tm: re.Match[str], lineno: int, line: str) -> None:
        """An uncaught C++ exception ("terminate called after throwing …"): the process aborted."""
        if self.shutdown:
            return
        name = tm.group(1)
        if name is None and self.abort_at and lineno - self.abort_at <= 8:
            return  # another rank's copy, interleaved past reading: the first one stands
        if name:
            rep = _REPEATED_RE.fullmatch(name)  # "c10::ErrorX c10::ErrorX" glued by two ranks
            name = rep.group(1) if rep else name
        self.abort_at, self.abort_name = lineno, name or ""
        if name:
            text = f"{name} (uncaught C++ exception)"
        elif tm.group(0).endswith(("exception", "recursively")):
            text = tm.group(0)
        else:
            text = "an uncaught C++ exception (terminate called)"
        self.scan.hit("cpp_abort", "deaths", name or "C++ exception", lineno, clip(line))
        self._raise(text, name or "", None, lineno, line)

    def _what(self, msg: str) -> None:
        """The aborting exception's message: it completes the final exception."""
        old = self.exc
        if old is None or old.lineno != self.abort_at or not self.abort_name:
            return
        self.abort_at = 0
        new = LogHit(
            old.signal, clip(f"{self.abort_name}: {msg}"), old.source, old.lineno, old.text
        )
        self.scan.amend("deaths", old, new)
        self.exc = new
        if self.death == old:
            self.death = new
        if self.cause is not None and self.cause.lineno == old.lineno:
            self.cause = LogHit("first_cause", new.value, old.source, old.lineno, old.text)

    def _codes(self, lineno: int, line: str, body: str) -> None:
        if not CODE_HINT_RE.search(line):
            return
        from ascend_audit.facts.error_codes import find_codes

        for code, kind, start, end in find_codes(line):
            self.code_until = lineno + 16
            self.block_until = max(self.block_until, self.code_until)
            key = (kind, code)
            n = self.codes.get(key, 0)
            self.codes[key] = n + 1
            self.candidate(lineno, excerpt(line, 0, len(line)), _message(body))
            if n == 0 and len(self.codes) <= 64:
                self.scan.hit(
                    "error_code",
                    "error_codes",
                    f"{kind}:{code}",
                    lineno,
                    excerpt(line, start, end),
                )

    def finish(self) -> None:
        """The log ends inside a traceback (its exception line cut off): that is how it died."""
        self._cut_traceback()

    def _cut_traceback(self) -> None:
        """An open traceback ends without its exception (the log or a new traceback cuts it)."""
        if self.tb_open is not None and not self.dead() and not self._tool_tb():
            lineno, text = self.tb_open
            self.tb_open = None
            self.fatal("unfinished_traceback", lineno, text, "a traceback the log ends inside")

    def dead(self) -> bool:
        """The log ends in death: a death the service did not get past. A shutdown after it is
        the teardown of the dead service, not a clean stop (deaths after a shutdown are not
        recorded: they are its teardown)."""
        return bool(self.died_at) and not self.progress_after

    def engine_kind(self) -> str | None:
        return engine_kind(self.engine_votes)


def _message(body: str) -> str:
    """A line's message without a daemon's bracketed head (time, pid, thread, level, file)."""
    return clip(DAEMON_HEAD_RE.sub("", body, count=1) or body)
