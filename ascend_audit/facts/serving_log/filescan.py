"""One fast pass over a log file: 1 MiB chunks, a combined prefilter, per-line work only on the
head, the tail, error blocks and candidate lines."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from ascend_audit.facts.serving_log.model import MAX_LINE_CHARS, LogHit, ServingLogFacts
from ascend_audit.facts.serving_log.scan import Scan
from ascend_audit.facts.serving_log.values import as_num, excerpt
from ascend_audit.safe_io import open_regular


def read_text_lines(path: str) -> Iterable[tuple[int, str]]:
    """Yield (lineno, text) from a file, decoded leniently, each line capped at MAX_LINE_CHARS."""
    with open_regular(path) as fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_CHARS * 4 + 1)
            if not raw:
                return
            lineno += 1
            text = raw[: MAX_LINE_CHARS * 4].decode("utf-8", errors="replace")
            if not raw.endswith(b"\n"):
                # Skip the rest of an over-long physical line so memory stays bounded.
                while raw and not raw.endswith(b"\n"):
                    raw = fh.readline(MAX_LINE_CHARS * 4 + 1)
            yield lineno, text[:MAX_LINE_CHARS]


CHUNK_BYTES = 1 << 20
TAIL_BYTES = 256 * 1024  # the end of a log is read line by line: that is where it dies
HEAD_LINES = 100_000  # until the server is up (or this many lines) every line is read
GARBAGE_SAMPLE = 1 << 20
_BAD_CHARS = "\ufffd" + "".join(chr(c) for c in range(32) if c not in (9, 10, 13, 27))
# After start-up, only lines with one of these can change a verdict: errors (Error, ERROR,
# ERRnnnnn, Exception, CANN E-codes, EngineCore) and warnings (torch_npu's "Warning:" carries the
# fallback and dtype-cast messages). One regex per first letter: a literal first character lets
# the regex engine skip ahead at memchr speed, a two-letter set does not (10x slower). Restarts
# ("LLM engine", "vLLM API server"), KV usage, requests and tracebacks are found with
# bytes.find / literal searches over the skipped ranges (see _FileScan.skip).
_MID_RES = (
    re.compile(rb"E(?:rror|RR|xception|ngine ?[Cc]ore|[A-Z]\d{4})"),
    re.compile(rb"W(?:arning|ARN)"),
)
_RESTART = b"LLM "  # "Initializing a V1 LLM engine", "vLLM API server version"
_TRACEBACK = b"Traceback (most recent call last)"
_USAGE_B_RE = re.compile(rb"KV cache usage: ([\d.]+)%")
_THROUGHPUT = b"throughput: "
_OK_ACCESS = b'HTTP/1.1" 2'
_MODELS_404 = b'/v1/models HTTP/1.1" 404'
# MindIE's access log, searched only in a MindIE log
_MINDIE_OK = b"] [status code: 2"
_MINDIE_404 = b"uri is /v1/models] [status code: 404]"


def _decode(raw: bytes) -> tuple[str, bool]:
    text = raw[: MAX_LINE_CHARS * 4].decode("utf-8", errors="replace")
    long = len(text) > MAX_LINE_CHARS or len(raw) > MAX_LINE_CHARS * 4
    if long:
        text = text[:MAX_LINE_CHARS]
    if text.endswith("\r"):
        text = text[:-1]
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text, long


def _line_start(block: bytes, lo: int, at: int) -> int:
    """Start of the line holding `at`, not before `lo` (which is a line start)."""
    nl = block.rfind(b"\n", lo, at)
    return lo if nl < 0 else nl + 1


class _FileScan:
    """Chunked reader: every line in the head, the tail and error blocks; candidates elsewhere."""

    def __init__(self, source: str, size: int, fallback: Any) -> None:
        self.scan = Scan(source)
        self.fallback = fallback
        self.lineno = 0
        self.long_lines = 0
        self.head_from = 0  # line of the last (re)start: the head is read line by line
        self.tail_from = max(0, size - TAIL_BYTES)
        self.sample_bad = 0
        self.sample_seen = 0

    def handle(self, raw: bytes) -> None:
        self.lineno += 1
        text, long = _decode(raw)
        if long:
            self.long_lines += 1
        if self.sample_seen < GARBAGE_SAMPLE:
            self.sample_seen += len(text) + 1
            self.sample_bad += sum(text.count(c) for c in _BAD_CHARS if c in text)
        life = self.scan.life
        before = life.stage_idx
        self.scan.line(self.lineno, text)
        if life.stage_idx <= 1 < before or (before < 0 <= life.stage_idx):
            self.head_from = self.lineno  # a (re)start: read its start-up line by line
        if self.fallback is not None:
            self.fallback.line(self.lineno, text)

    def full(self, offset: int) -> bool:
        life = self.scan.life
        return (
            (life.stage_idx < 5 and self.lineno - self.head_from < HEAD_LINES)
            or self.lineno < life.block_until
            or offset >= self.tail_from
        )

    def _line_at(self, block: bytes, a: int, at: int, end: int) -> tuple[int, str]:
        """(line number, text) of the line holding `at`, inside a skipped range from `a`."""
        ls = _line_start(block, a, at)
        le = block.find(b"\n", at, end)
        le = end if le < 0 else le
        return self.lineno + block.count(b"\n", a, ls) + 1, _decode(block[ls:le])[0]

    def skip(self, block: bytes, a: int, b: int) -> None:
        """Lines [a, b) hold no candidate: count them, their requests and their KV usage."""
        n = block.count(b"\n", a, b)
        scan, life = self.scan, self.scan.life
        mindie = "mindie" in life.engine_votes
        ok_access = _MINDIE_OK if mindie else _OK_ACCESS
        ok = block.count(ok_access, a, b)
        if ok:
            if life.serving == 0:
                lineno, text = self._line_at(block, a, block.find(ok_access, a, b), b)
                life.access("/", "200", lineno, text)
                ok -= 1
            life.serving += ok
            if not life.died_at:
                life.cause = None  # it served after that error line
            if ok:
                life.progress()
        models_404 = _MINDIE_404 if mindie else _MODELS_404
        at = block.find(models_404, a, b)
        while 0 <= at < b:
            lineno, text = self._line_at(block, a, at, b)
            life.access("/v1/models", "404", lineno, text)
            at = block.find(models_404, at + len(models_404), b)
        if life.stage_idx < 6 and block.find(_THROUGHPUT, a, b) >= 0:
            at = block.find(_THROUGHPUT, a, b)
            lineno, text = self._line_at(block, a, at, b)
            if "Avg" in text:
                life.stage("serving", lineno, text)
        usage = 0
        best: tuple[float, int] | None = None
        for m in _USAGE_B_RE.finditer(block, a, b):
            usage += 1
            pct = as_num(m.group(1).decode("ascii"))
            if pct is not None and (best is None or pct > best[0]):
                best = (pct, m.start())
        if usage:
            scan.counts["kv_usage_pct"] = scan.counts.get("kv_usage_pct", 0) + usage
            life.progress()
            cur = scan.usage.value if scan.usage is not None else None
            if best is not None and (cur is None or best[0] > cur):  # type: ignore[operator]
                lineno, text = self._line_at(block, a, best[1], b)
                i = max(text.find("GPU KV cache usage"), 0)
                scan.usage = LogHit(
                    "kv_usage_pct", best[0], scan.source, lineno, excerpt(text, i, i + 30)
                )
        self.lineno += n
        if self.fallback is not None:
            self.fallback.skipped(n)

    def block(self, block: bytes, base: int) -> None:
        """A run of whole lines (ending in a newline, or the last line of the file)."""
        pos, n = 0, len(block)
        restart = -1  # next "LLM " at or after pos (-2: none left in this block)
        # Per prefilter regex, its next match (start, end) at or after pos (-2: none left). No
        # match can hold another, so a match ending past the search limit hides no shorter one.
        nxt = [(-1, 0)] * len(_MID_RES)
        while pos < n:
            if self.full(base + pos):
                nl = block.find(b"\n", pos)
                nl = n if nl < 0 else nl
                self.handle(block[pos:nl])
                pos = nl + 1
                continue
            stop = n if base + n <= self.tail_from else max(pos, self.tail_from - base)
            if restart != -2 and restart < pos:
                restart = block.find(_RESTART, pos, stop)
                restart = -2 if restart < 0 else restart
            limit = restart if restart >= 0 else stop
            at = restart
            for k, rx in enumerate(_MID_RES):
                s, e = nxt[k]
                if s != -2 and s < pos:
                    m = rx.search(block, pos)
                    s, e = (m.start(), m.end()) if m is not None else (-2, 0)
                    nxt[k] = (s, e)
                if s >= 0 and e <= limit and (at < 0 or s < at):
                    at = s
            if at < 0:
                # Up to `stop`, then (if the tail starts inside this block) line by line.
                cut = block.rfind(b"\n", pos, stop) + 1 if stop < n else n
                cut = max(cut, pos)
                self.skip(block, pos, cut)
                if cut == pos and stop < n:
                    nl = block.find(b"\n", pos)
                    nl = n if nl < 0 else nl
                    self.handle(block[pos:nl])
                    cut = nl + 1
                pos = cut
                continue
            ls = _line_start(block, pos, at)
            tb = block.find(_TRACEBACK, pos, ls)
            if tb >= 0:  # a bare traceback before this error line: read it whole
                ls = _line_start(block, pos, tb)
            self.skip(block, pos, ls)
            nl = block.find(b"\n", max(at, ls))
            nl = n if nl < 0 else nl
            if tb >= 0:
                for line in block[ls:nl].split(b"\n"):
                    self.handle(line)
            else:
                self.handle(block[ls:nl])
            pos = nl + 1


def scan_serving_log_file(
    path: str,
    source: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    fallbacks: bool = True,
) -> ServingLogFacts:
    """Scan a serving log file once, in 1 MiB chunks and bounded memory; the operator layer's
    fallback warnings are collected in the same pass (`facts.fallback`). Raises OSError only."""
    from dataclasses import replace

    from ascend_audit.facts.fallback_log import FallbackScanner

    src = str(source if source is not None else path)
    with open_regular(path) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
        except OSError:
            size = 0
        fs = _FileScan(src, size, FallbackScanner(src) if fallbacks else None)
        pending = b""
        done = 0
        skipping = False
        while True:
            data = fh.read(CHUNK_BYTES)
            if not data:
                break
            base = done - len(pending)
            done += len(data)
            buf = pending + data if pending else data
            if skipping:  # the rest of an over-long line
                nl = buf.find(b"\n")
                if nl < 0:
                    pending = b""
                    continue
                base += nl + 1
                buf = buf[nl + 1 :]
                skipping = False
            end = buf.rfind(b"\n") + 1
            if end == 0:
                if len(buf) > MAX_LINE_CHARS * 4:
                    fs.handle(buf[: MAX_LINE_CHARS * 4 + 1])
                    pending, skipping = b"", True
                else:
                    pending = buf
                continue
            fs.block(buf[:end], base)
            pending = buf[end:]
            if progress is not None:
                progress(done, size)
        if pending and not skipping:
            fs.block(pending, done - len(pending))
    facts = fs.scan.freeze(fs.lineno, fs.long_lines)
    if fs.lineno == 0:
        facts = replace(facts, problems=(*facts.problems, "log is empty"))
    share = fs.sample_bad / fs.sample_seen if fs.sample_seen else 0.0
    summary = fs.fallback.summary() if fs.fallback is not None else None
    return replace(facts, binary_share=round(share, 4), fallback=summary)
