"""Terminal renderer: one line per check as it finishes, grouped by layer, then a summary.

Everything fits the terminal (`COLUMNS` or the terminal's width): text wraps on words, counting
CJK characters as two columns, with a hanging indent under the ID column; a word is split only
when it is wider than a whole line. SKIP, BLOCKED and ERROR results that share a reason print
once, with the list of checks. The summary prints each failure's fix whole.
"""

from __future__ import annotations

import shutil
import sys
import unicodedata
from typing import Any, TextIO

from ascend_audit.reports import localize

from ascend_audit.i18n import layer_word, status_word, t, verdict_word
from ascend_audit.model import LayerReport, Progress, Report, Result, Status, Verdict

_COLOURS = {
    Status.PASS: "32",
    Status.WARN: "33",
    Status.FAIL: "31",
    Status.ERROR: "35",
    Status.SKIP: "2",
    Status.BLOCKED: "2",
    Status.WAIVED: "36",
    Verdict.READY: "32",
    Verdict.DEGRADED: "33",
    Verdict.NOT_READY: "31",
    Verdict.MISSING: "35",
    Verdict.BLOCKED: "2",
}
DEFAULT_WIDTH = 100  # when neither COLUMNS nor a terminal says (a pipe, a CI log)
MIN_WIDTH = 40
ID_WIDTH = 14  # at least; the CLI passes the longest id of the run
MAX_FAILURES = 20
EVIDENCE_ITEMS, EXCERPT_LINES = 5, 6
GROUPED = (Status.SKIP, Status.BLOCKED, Status.ERROR)  # one line per shared cause

# C0 and C1 controls (tab and newline handled by the wrapper), DEL, and bidi overrides: node text
# must not move the cursor, recolour the terminal or reorder what the reader sees.
_NO_BREAK_BEFORE = set("，。、；：！？）】》」』,.;:!?)]}%")


def safe(text: Any) -> str:
    """Node text made inert for a terminal: control characters become U+FFFD, tabs spaces."""
    from ascend_audit.textsafe import printable  # escape sequences, C0/C1, bidi: one function

    s = text if isinstance(text, str) else str(text)
    return printable(s.replace("\t", " "), replacement="\ufffd")


def char_width(ch: str) -> int:
    """Columns a character takes: 2 for wide and full-width (CJK), 0 for combining marks."""
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Columns TEXT takes on a terminal."""
    return sum(char_width(c) for c in text)


def pad(text: str, width: int) -> str:
    """TEXT left-aligned in WIDTH columns (CJK-aware)."""
    return text + " " * max(0, width - display_width(text))


def terminal_width(out: TextIO | None = None) -> int:
    """COLUMNS when set, else the terminal's width, else DEFAULT_WIDTH; never below MIN_WIDTH."""
    width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return max(MIN_WIDTH, width or DEFAULT_WIDTH)


def _tokens(text: str) -> list[str]:
    """Words, single wide characters (a break may come between any two) and single spaces."""
    out: list[str] = []
    word = ""
    for ch in text:
        if ch.isspace():
            if word:
                out.append(word)
                word = ""
            if out and out[-1] != " ":
                out.append(" ")
        elif char_width(ch) == 2 and ch not in _NO_BREAK_BEFORE:
            if word:
                out.append(word)
                word = ""
            out.append(ch)
        elif ch in _NO_BREAK_BEFORE and not word and out and out[-1] != " ":
            out[-1] += ch  # closing punctuation stays with what it closes
        else:
            word += ch
    if word:
        out.append(word)
    return out


def _split_long(word: str, room: int) -> tuple[str, str]:
    """Split a word wider than a whole line: after a / , = : - if one fits, else at ROOM."""
    used, cut, best = 0, 0, 0
    for i, ch in enumerate(word):
        used += char_width(ch)
        if used > room:
            break
        cut = i + 1
        if ch in "/,=:-_&?" and i + 1 < len(word):
            best = i + 1
    at = best or max(1, cut)
    return word[:at], word[at:]


def wrap(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """TEXT wrapped to WIDTH columns; FIRST prefixes line one (default INDENT), INDENT the rest.

    Paragraphs (blank lines) and single newlines are kept as breaks."""
    first = indent if first is None else first
    lines: list[str] = []
    for para in safe(text).split("\n"):
        prefix = first if not lines else indent
        line, used = prefix, display_width(prefix)
        start = used
        for tok in _tokens(para):
            if tok == " ":
                if used > start:
                    line, used = line + " ", used + 1
                continue
            w = display_width(tok)
            while used + w > width and w > width - display_width(indent):
                # wider than any line: fill this one, carry the rest
                room = width - used
                if room < 8 and used > start:
                    lines.append(line.rstrip())
                    line, used, start = indent, display_width(indent), display_width(indent)
                    room = width - used
                head, tok = _split_long(tok, room)
                lines.append(line + head)
                line, used, start = indent, display_width(indent), display_width(indent)
                w = display_width(tok)
            if used + w > width and used > start:
                lines.append(line.rstrip())
                line, used, start = indent, display_width(indent), display_width(indent)
            line, used = line + tok, used + w
        lines.append(line.rstrip())
    return lines


def _paint(text: str, key: Status | Verdict, colour: bool) -> str:
    return f"\033[{_COLOURS[key]}m{text}\033[0m" if colour else text


class Columns:
    """The layout of one run's result lines: status and id columns, hanging indent, width."""

    def __init__(self, lang: str, width: int, id_width: int = ID_WIDTH) -> None:
        self.lang = lang
        self.width = max(MIN_WIDTH, width)
        self.status_width = max(display_width(status_word(s, lang)) for s in Status)
        self.id_width = max(ID_WIDTH, id_width)
        self.indent = " " * (2 + self.status_width + 2 + self.id_width + 2)
        if self.width - len(self.indent) < 30:  # narrow: text under the id instead of beside it
            self.indent = " " * 6

    def status(self, status: Status, colour: bool) -> str:
        word = status_word(status, self.lang)
        return _paint(word, status, colour) + " " * (self.status_width - display_width(word))

    def row(self, status: Status, ids: str, text: str, colour: bool) -> list[str]:
        """`  STATUS  ID  text…` with text wrapped under itself; long id lists wrap too."""
        head = f"  {self.status(status, False)}  "
        id_lines = wrap(ids, self.width, " " * display_width(head), head)
        last = id_lines[-1]
        if display_width(last) <= len(self.indent) - 2 and len(id_lines) == 1:
            first = pad(last, len(self.indent))
            body = wrap(text, self.width, self.indent, first) if text else [last]
            lines = body
        else:
            lines = id_lines + (wrap(text, self.width, self.indent) if text else [])
        if colour:
            plain = status_word(status, self.lang)
            lines[0] = lines[0].replace(plain, _paint(plain, status, True), 1)
        return lines


class TerminalProgress(Progress):
    """Streams results as they finish; quiet shows only the summary, verbose adds evidence."""

    def __init__(
        self,
        out: TextIO | None = None,
        colour: bool | None = None,
        verbosity: int = 0,
        lang: str = "en",
        width: int | None = None,
        id_width: int = ID_WIDTH,
    ):
        self.out = out or sys.stdout
        self.colour = self.out.isatty() if colour is None else colour
        self.verbosity = verbosity
        self.lang = lang
        self.width = width or terminal_width(self.out)
        self.cols = Columns(lang, self.width, id_width)
        self._held: list[Result] = []
        self._seen: list[Result] = []

    def _write(self, lines: list[str]) -> None:
        self.out.write("".join(line + "\n" for line in lines))
        self.out.flush()

    def layer_started(self, layer: str) -> None:
        if self.verbosity >= 0:
            self._write(["", layer_word(layer, self.lang).upper()])

    def _text(self, r: Result) -> str:
        if self.lang == "en":
            return localize.summary(r, "en")
        name = localize.title(r, self.lang)
        if r.status is Status.PASS:
            return name
        return f"{name}\n{t('result.finding', self.lang, text=localize.summary(r, self.lang))}"

    def _lines(self, r: Result) -> list[str]:
        text = self._text(r)
        if self.verbosity > 0:
            text += f"  ({r.duration_ms:.0f} ms)"
        lines = self.cols.row(r.status, r.id, text, self.colour)
        if self.verbosity > 0:
            lines += evidence_lines(r, self.width, self.cols.indent, self.lang)
        return lines

    def result(self, result: Result) -> None:
        self._seen.append(result)
        if self.verbosity < 0:
            return
        if result.status in GROUPED and self.verbosity == 0:
            self._held.append(result)  # printed at the layer's end, grouped by reason
            return
        self._write(self._lines(result))

    def layer_finished(self, layer: LayerReport) -> None:
        if self.verbosity < 0:
            return
        lines: list[str] = []
        for status, ids, reason in group_by_reason(self._held, self.lang):
            lines += self.cols.row(status, ", ".join(ids), reason, self.colour)
        self._held = []
        verdict = _paint(verdict_word(layer.verdict, self.lang), layer.verdict, self.colour)
        why = localize.layer_reason(layer, self._seen, self.lang)
        head = f"  → {layer_word(layer.name, self.lang)} "
        plain = verdict_word(layer.verdict, self.lang)
        wrapped = wrap(f"{plain}{' — ' + why if why else ''}", self.width, "      ", head)
        wrapped[0] = wrapped[0].replace(plain, verdict, 1)
        self._write(lines + wrapped)


def group_by_reason(results: list[Result], lang: str) -> list[tuple[Status, list[str], str]]:
    """SKIP/BLOCKED/ERROR results sharing status and reason → (status, their ids, the reason)."""
    groups: dict[tuple[Status, str], list[str]] = {}
    for r in results:
        groups.setdefault((r.status, localize.summary(r, lang)), []).append(r.id)
    out = []
    for (status, reason), ids in groups.items():
        if len(ids) == 1 and lang != "en":
            by_id = next(r for r in results if r.id == ids[0])
            reason = f"{localize.title(by_id, lang)}\n{t('result.finding', lang, text=reason)}"
        out.append((status, ids, reason))
    return out


def evidence_lines(r: Result, width: int, indent: str, lang: str) -> list[str]:
    """-v: each evidence item's kind and source, and the first lines of its excerpt."""
    lines: list[str] = []
    for ev in r.evidence[:EVIDENCE_ITEMS]:
        lines += wrap(f"· {ev.kind}: {ev.source}", width, indent + "  ", indent)
        excerpt = [x for x in safe(ev.excerpt or "").splitlines() if x.strip()]
        for x in excerpt[:EXCERPT_LINES]:
            lines += wrap(x, width, indent + "    ", indent + "  │ ")
        if len(excerpt) > EXCERPT_LINES:
            more = t("term.more_lines", lang, n=len(excerpt) - EXCERPT_LINES)
            lines.append(indent + "  │ " + more)
    if len(r.evidence) > EVIDENCE_ITEMS:
        lines.append(indent + t("term.more_lines", lang, n=len(r.evidence) - EVIDENCE_ITEMS))
    return lines


def render_summary(
    report: Report,
    out: TextIO,
    colour: bool = False,
    lang: str | None = None,
    width: int | None = None,
) -> None:
    """Overall verdict, layer verdicts, and each failure with its whole fix."""
    lang = lang or report.lang
    width = max(MIN_WIDTH, width or terminal_width(out))
    lines = ["", t("term.summary", lang)]
    name_w = (
        max(display_width(layer_word(x.name, lang)) for x in report.layers) if report.layers else 8
    )
    verdict_w = max(display_width(verdict_word(v, lang)) for v in Verdict)
    for layer in report.layers:
        plain = verdict_word(layer.verdict, lang)
        head = f"  {pad(layer_word(layer.name, lang), name_w)}  {pad(plain, verdict_w)}  "
        req = "" if layer.required else t("term.not_required", lang) + " "
        why = localize.layer_reason(layer, report.results, lang)
        wrapped = wrap(req + why, width, " " * display_width(head), head)
        wrapped[0] = wrapped[0].replace(plain, _paint(plain, layer.verdict, colour), 1)
        lines += wrapped
    tally = ", ".join(f"{n} {s}" for s, n in localize.tally(report.results, lang))
    host = safe(report.host.get("hostname", "?"))
    plain = verdict_word(report.verdict, lang)
    node = t("term.node", lang, host=host, verdict=plain) + (f"  ({tally})" if tally else "")
    wrapped = wrap(node, width, "    ", "  ")
    wrapped[0] = wrapped[0].replace(plain, _paint(plain, report.verdict, colour), 1)
    lines += ["", *wrapped]
    failing = [r for r in report.results if r.status in (Status.FAIL, Status.ERROR)]
    for r in failing[:MAX_FAILURES]:
        mark = _paint("✗", r.status, colour)
        lines += wrap(f"{r.id}  {localize.title(r, lang)}", width, "      ", f"  {mark} ")
        lines += wrap(localize.summary(r, lang), width, "      ")
        fix = localize.remediation(r, lang)
        if fix:
            label = t("term.fix", lang)
            gap = "" if char_width(label[-1]) == 2 else " "
            lines += wrap(fix, width, "      ", f"    {label}{gap}")
    if len(failing) > MAX_FAILURES:
        lines.append("  " + t("term.more_failures", lang, n=len(failing) - MAX_FAILURES))
    out.write("".join(line + "\n" for line in lines))
    out.flush()
