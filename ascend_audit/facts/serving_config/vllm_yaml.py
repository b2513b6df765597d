"""vLLM YAML (`vllm serve --config`): every top-level option with the line it was set on."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ascend_audit.facts.serving_config.builder import SHORT_FLAGS, Builder
from ascend_audit.facts.serving_config.model import ServingConfig
from ascend_audit.facts.serving_config.values import (
    MAX_NODES,
    MAX_TEXT,
    find_lineno,
    jsonable,
    norm_flag,
    top_level_keys,
)

_MAX_KEY_SCANS = 64


def _safe_yaml(text: str) -> tuple[Any, str | None]:
    if len(text) > MAX_TEXT:
        return None, "file too large"
    try:
        import yaml  # lazy: only configs need it
    except ImportError:
        return None, "PyYAML is not installed"
    try:
        data = yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError and friends, with line info in the message
        return None, f"invalid YAML: {str(exc)[:200]}"
    try:
        return jsonable(data, [MAX_NODES]), None
    except (ValueError, RecursionError) as exc:
        return None, f"invalid YAML: {exc}"


def apply_yaml(b: Builder, text: str, source: str) -> None:
    if not isinstance(text, str):
        b.problems.append(f"{source}: not text")
        return
    data, problem = _safe_yaml(text)
    if problem:
        b.problems.append(f"{source}: {problem}")
        return
    if data is None:
        b.problems.append(f"{source}: empty config")
        return
    if not isinstance(data, dict):
        b.problems.append(f"{source}: expected a mapping of options, got {type(data).__name__}")
        return
    lines = text.splitlines()
    first = top_level_keys(lines)
    scans = 0
    lineno: int | None
    for raw_key, value in data.items():
        key = SHORT_FLAGS.get(raw_key, norm_flag(raw_key))
        if raw_key in first:
            lineno, line = first[raw_key]
        elif scans < _MAX_KEY_SCANS:  # rare (flow style, odd quoting): bounded full scans
            scans += 1
            lineno, line = find_lineno(lines, raw_key)
        else:
            lineno, line = None, ""
        if key.startswith("no_") and value is True:
            key, value = key[3:], False
        b.set(key, value, lineno, line or f"{raw_key}: {value}", source)


def parse_vllm_yaml(text: str, source: str, env: Mapping[str, str] | None = None) -> ServingConfig:
    """Parse a `vllm serve --config` YAML file on its own."""
    b = Builder(str(source))
    apply_yaml(b, text, str(source))
    return b.build("vllm", env)
