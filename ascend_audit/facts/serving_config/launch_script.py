r"""Shell launch scripts and pasted command lines that run `vllm serve …` (or the api_server
module), `\` continuations joined."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ascend_audit.facts.serving_config.argv import is_vllm_argv, parse_vllm_argv
from ascend_audit.facts.serving_config.builder import env_of
from ascend_audit.facts.serving_config.model import ServingConfig
from ascend_audit.facts.serving_config.values import MAX_TEXT

# `vllm serve` at a command start, after a path, or after prose pasted on the same line
# (`- 启动服务报错：vllm serve …`); not inside a word (`myvllm serve`).
_LAUNCH_RE = re.compile(r"(?:^|[^\w.-])vllm\s+serve\b|vllm\.entrypoints\.")
_SHELL_STOP = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>>", "&>", "|&"})
_ASSIGN_RE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def is_launch_script(text: str) -> bool:
    """True when a text holds a `vllm serve …` or `python -m vllm.entrypoints…` command."""
    if not isinstance(text, str):
        return False
    return any(
        _LAUNCH_RE.search(line)
        for line in text[:1_000_000].splitlines()
        if not line.lstrip().startswith("#")
    )


def _logical_lines(text: str, problems: list[str]) -> list[tuple[int, str]]:
    r"""(first physical line, joined text) of each shell command; `\` continuations joined.
    A comment after a continuation backslash is dropped (what its author meant), with a note."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        m = re.search(r"\\\s+#.*$", line)
        if m:
            problems.append(
                f"line {n}: a comment after the line-continuation backslash; the shell would end "
                "the command here (read as if the comment were not there)"
            )
            line = line[: m.start()] + "\\"
        if not buf:
            start = n
            if line.lstrip().startswith("#"):
                continue
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(b.strip() for b in buf)))
        buf = []
    if buf:
        out.append((start, " ".join(b.strip() for b in buf)))
    return out


def parse_launch_script(
    text: str, source: str, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """A shell script or pasted command line that runs `vllm serve …` (or the api_server module):
    continuations joined, shell variables left as they are, `export X=…` lines as environment."""
    import shlex

    src = str(source)
    problems: list[str] = []
    if not isinstance(text, str) or not text.strip():
        return ServingConfig(source=src, problems=(f"{src}: empty",))
    env_seen: dict[str, str] = dict(env or {})
    commands: list[tuple[int, list[str]]] = []
    for lineno, line in _logical_lines(text[:MAX_TEXT], problems):
        try:
            toks = shlex.split(line, comments=True, posix=True)
        except ValueError as exc:  # an unclosed quote: read what splits
            problems.append(f"line {lineno}: {exc}")
            toks = line.split()
        while (toks and _ASSIGN_RE.match(toks[0])) or toks[:1] == ["export"]:
            if toks[0] == "export":
                toks = toks[1:]
                continue
            m = _ASSIGN_RE.match(toks[0])
            if m:
                env_seen[m.group(1)] = m.group(2)
            toks = toks[1:]
        if is_vllm_argv(toks):
            cut = next(
                (i for i, t in enumerate(toks) if t in _SHELL_STOP or t.startswith(">")), None
            )
            commands.append((lineno, toks[:cut]))
    if not commands:
        return ServingConfig(
            source=src, env=env_of(env_seen), problems=(f"{src}: no vllm serve command found",)
        )
    if len(commands) > 1:
        problems.append(
            f"{len(commands)} vllm commands (lines {', '.join(str(c[0]) for c in commands[:8])}); "
            f"the first (line {commands[0][0]}) is judged"
        )
    first_line, argv = commands[0]
    cfg = parse_vllm_argv(argv, src, env_seen)
    lines = text.splitlines()
    items = []
    for item in cfg.items:
        flag = (item.text.split() or [""])[0].split("=", 1)[0]
        where = first_line
        for n in range(first_line, min(len(lines), first_line + 400) + 1):
            if flag and flag in lines[n - 1]:
                where = n
                break
        items.append(replace(item, lineno=where))
    return replace(
        cfg,
        items=tuple(items),
        problems=tuple(p[:300] for p in (*cfg.problems, *problems)[:100]),
    )
