"""vLLM server command lines: `vllm serve MODEL …` and
`python -m vllm.entrypoints.openai.api_server …`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ascend_audit.facts.serving_config.builder import JSON_FLAGS, SHORT_FLAGS, Builder, env_of
from ascend_audit.facts.serving_config.model import ServingConfig
from ascend_audit.facts.serving_config.values import norm_flag, scalar
from ascend_audit.facts.serving_config.vllm_yaml import apply_yaml

# Flags that take no value (argparse store_true / BooleanOptionalAction).
_BOOL_FLAGS = frozenset(
    {
        "enforce_eager",
        "trust_remote_code",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "enable_expert_parallel",
        "enable_lora",
        "enable_sleep_mode",
        "enable_auto_tool_choice",
        "enable_reasoning",
        "enable_log_requests",
        "enable_log_outputs",
        "disable_log_stats",
        "disable_log_requests",
        "disable_custom_all_reduce",
        "disable_sliding_window",
        "disable_frontend_multiprocessing",
        "skip_tokenizer_init",
        "async_scheduling",
        "headless",
    }
)


def _program(token: str) -> str:
    """The program a token names: `/usr/bin/vllm` -> vllm; a command pasted after prose on its
    line (`启动服务报错：vllm serve …`, `$vllm`) -> vllm."""
    return re.split(r"[^\w.-]+", token)[-1]


def is_vllm_argv(argv: Sequence[str]) -> bool:
    """True when an argv looks like a vLLM server (vllm serve / the OpenAI api_server module)."""
    try:
        toks = [str(t) for t in argv]
    except TypeError:
        return False
    for i, t in enumerate(toks):
        base = _program(t)
        if base == "vllm" and i + 1 < len(toks) and toks[i + 1] == "serve":
            return True
        if t.startswith("vllm.entrypoints"):
            return True
    return False


def _argv_start(toks: list[str]) -> tuple[int, str | None]:
    """Index of the first option token after the program, and the positional model if any."""
    for i, t in enumerate(toks):
        base = _program(t)
        if base == "vllm" and i + 1 < len(toks) and toks[i + 1] == "serve":
            j = i + 2
            if j < len(toks) and not toks[j].startswith("-"):
                return j + 1, toks[j]
            return j, None
        if t.startswith("vllm.entrypoints"):
            return i + 1, None
    return 0, None


def parse_vllm_argv(
    argv: Sequence[str],
    source: str = "cmdline",
    env: Mapping[str, str] | None = None,
    config_text: str | None = None,
    config_source: str | None = None,
) -> ServingConfig:
    """Parse a vLLM server argv; `config_text` is the YAML that `--config` names, if read."""
    b = Builder(str(source))
    try:
        toks = [t if isinstance(t, str) else str(t) for t in argv]
    except TypeError:
        return ServingConfig(source=str(source), env=env_of(env), problems=("argv is not a list",))
    engine = "vllm" if is_vllm_argv(toks) else None
    if engine is None:
        b.problems.append("not a recognisable vLLM command line (vllm serve / vllm.entrypoints)")
    start, positional = _argv_start(toks)
    if config_text is not None:
        apply_yaml(b, config_text, config_source or "config.yaml")
    if positional is not None:
        b.set("model", positional, start - 1, f"serve {positional}")
    i = start
    while i < len(toks):
        tok = toks[i]
        fi = i  # argv index of the flag: the evidence position
        i += 1
        if not tok.startswith("-") or tok in ("-", "--"):
            continue
        name, eq, inline = tok.partition("=")
        bare = name.lstrip("-")
        if (
            name.startswith("-O")
            and not name.startswith("--")
            and len(bare) > 1
            and bare[1:].isdigit()
        ):
            b.set("compilation_config", int(bare[1:]), fi, tok)
            continue
        head, dot, sub = bare.partition(".")
        key = SHORT_FLAGS.get(head, norm_flag(head))
        if dot and not eq and i < len(toks) and not toks[i].startswith("--"):
            b.set_sub(key, sub, toks[i], fi, f"{tok} {toks[i]}")
            i += 1
            continue
        if dot:
            b.set_sub(key, sub, inline if eq else True, fi, tok)
            continue
        if eq:
            value: Any = inline
            text = tok
        elif key.startswith("no_"):
            key, value, text = key[3:], False, tok
        elif key in _BOOL_FLAGS or key.startswith(("enable_", "disable_")) or i >= len(toks):
            value, text = True, tok
            if i < len(toks) and toks[i].lower() in ("true", "false"):
                value, text = toks[i].lower() == "true", f"{tok} {toks[i]}"
                i += 1
        elif toks[i].startswith("--") or (toks[i].startswith("-") and not _is_number(toks[i])):
            value, text = True, tok
        else:
            value, text = toks[i], f"{tok} {toks[i]}"
            i += 1
        if key == "config" and isinstance(value, str) and config_text is None:
            b.set("config", value, fi, text)
            continue
        b.set(key, value if key in JSON_FLAGS else scalar(value), fi, text)
    return b.build(engine, env)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
