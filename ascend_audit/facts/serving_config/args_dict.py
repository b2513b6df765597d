"""vLLM's logged `non-default args: {...}` line (a Python dict repr, nested dicts included)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ascend_audit.facts.serving_config.builder import Builder
from ascend_audit.facts.serving_config.model import ServingConfig
from ascend_audit.facts.serving_config.values import load_json_like, norm_flag


def parse_vllm_args_dict(
    text: str, source: str, lineno: int | None = None, env: Mapping[str, str] | None = None
) -> ServingConfig:
    """vLLM's logged `non-default args: {...}` (a Python dict repr, nested dicts included)."""
    b = Builder(str(source))
    start = text.find("{") if isinstance(text, str) else -1
    if start < 0:
        b.problems.append("no argument dict")
        return b.build("vllm", env)
    value, problem = load_json_like(text[start:])
    if problem or not isinstance(value, dict):
        b.problems.append(f"non-default args: {problem or 'not a dict'}")
        return b.build("vllm", env)
    line = text.strip()
    for raw_key, v in value.items():
        key = norm_flag(str(raw_key))
        if key == "model_tag":
            continue
        b.set(key, v, lineno, _arg_text(line, str(raw_key), v))
    return b.build("vllm", env)


def _arg_text(line: str, key: str, value: Any) -> str:
    """The `'key': value` part of a logged dict line (the whole line when it is short)."""
    at = line.find(f"'{key}'")
    if len(line) <= 300 or at < 0:
        return line[:500]
    return line[at : at + 200]
