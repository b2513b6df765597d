"""trace_view / msprof JSON timelines, streamed by token in bounded memory."""

from __future__ import annotations

import os
import re
from pathlib import Path

from ascend_audit.facts.profiler.columns import is_ai_cpu
from ascend_audit.facts.profiler.summaries import TraceViewSummary
from ascend_audit.safe_io import open_regular

# --------------------------------------------------------------------------- trace view JSON

_JSON_TOKEN_RE = re.compile(
    rb'"(name|Task Type|cat|ph)"\s*:\s*"((?:[^"\\]|\\.){0,4096})"', re.DOTALL
)
_CHUNK = 4 << 20
_OVERLAP = 8192
MAX_KEYS = 1000


def _bump(counter: dict[str, int], key: str, folded: list[bool]) -> None:
    if key in counter:
        counter[key] += 1
    elif len(counter) < MAX_KEYS:
        counter[key] = 1
    else:
        folded[0] = True
        counter["<other>"] = counter.get("<other>", 0) + 1


def summarize_trace_view(path: str | os.PathLike[str]) -> TraceViewSummary:
    """Count run-time compiled operators and device task types in a trace JSON, streaming."""
    p = Path(path)
    source = str(p)
    try:
        if not p.is_file():
            return TraceViewSummary(source, problems=(f"{source}: no such file",))
        events = compile_exec = 0
        device = False
        tasks: dict[str, int] = {}
        ai_cpu: dict[str, int] = {}
        cats: dict[str, int] = {}
        folded = [False]
        last_name = ""
        first_char = b""
        last_char = b""
        with open_regular(p) as fh:
            carry = b""
            while True:
                chunk = fh.read(_CHUNK)
                eof = not chunk
                buf = carry + chunk
                if not buf:
                    break
                if not first_char:
                    lead = buf.lstrip()
                    first_char = lead[:1]
                    if lead.startswith(b"\xef\xbb\xbf"):
                        first_char = lead[3:].lstrip()[:1]
                tail = buf.rstrip()
                if tail:
                    last_char = tail[-1:]
                limit = len(buf) if eof else max(0, len(buf) - _OVERLAP)
                end = 0
                for m in _JSON_TOKEN_RE.finditer(buf):
                    if m.start() >= limit:
                        break
                    end = m.end()
                    key, raw = m.group(1), m.group(2)
                    value = raw.decode("utf-8", errors="replace")
                    if key == b"name":
                        last_name = value
                        if "aclopCompileAndExecute" in value:
                            compile_exec += 1
                        elif value == "Ascend Hardware":
                            device = True
                    elif key == b"ph":
                        events += 1
                    elif key == b"cat":
                        _bump(cats, value, folded)
                    else:
                        _bump(tasks, value, folded)
                        if is_ai_cpu(value):
                            _bump(ai_cpu, last_name, folded)
                if eof:
                    break
                carry = buf[max(end, limit) :]
        problems: list[str] = []
        if first_char not in (b"[", b"{"):
            problems.append(f"{p.name}: not a JSON trace (it does not start with '[' or '{{')")
        elif last_char not in (b"]", b"}"):
            problems.append(f"{p.name}: the JSON ends before its closing bracket (truncated?)")
        if folded[0]:
            problems.append(f"more than {MAX_KEYS} distinct keys in a count; the rest are <other>")
        if tasks:
            device = True

        def ordered(d: dict[str, int]) -> tuple[tuple[str, int], ...]:
            return tuple(sorted(d.items(), key=lambda kv: (-kv[1], kv[0])))

        return TraceViewSummary(
            source=source,
            events=events,
            aclop_compile_execute=compile_exec,
            has_device_timeline=device,
            task_types=ordered(tasks),
            ai_cpu_tasks=ordered(ai_cpu),
            categories=ordered(cats),
            problems=tuple(problems),
        )
    except Exception as exc:
        return TraceViewSummary(
            source, problems=(f"{p.name}: cannot read: {type(exc).__name__}: {exc}",)
        )
