"""Lenient JSON for rank tables: comments, `...` elisions, trailing commas, leading captions."""

from __future__ import annotations

import json
from typing import Any


def strip_json_comments(text: str) -> tuple[str, bool]:
    """Remove `//`, `#` and `/* */` comments outside strings, `...` lines and trailing commas."""
    out: list[str] = []
    had = False
    i, n = 0, len(text)
    in_str = False
    line_start = True
    while i < n:
        ch = text[i]
        if in_str:
            j = i
            while j < n and text[j] not in '"\\\n':
                j += 1
            out.append(text[i:j])
            if j >= n:
                break
            c = text[j]
            if c == "\\":
                out.append(text[j : j + 2])
                i = j + 2
            else:
                # a closing quote, or a newline inside an unterminated string (JSON will
                # reject it anyway): either way the string ends here
                out.append(c)
                in_str = False
                line_start = c == "\n"
                i = j + 1
            continue
        if ch == '"':
            in_str = True
            line_start = False
            out.append(ch)
            i += 1
        elif ch == "#" or (ch == "/" and text.startswith("//", i)):
            had = True
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif ch == "/" and text.startswith("/*", i):
            had = True
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == "." and line_start:
            j = text.find("\n", i)
            end = n if j < 0 else j
            if set(text[i:end].strip()) <= {".", " "}:
                had = True
                i = end
            else:
                out.append(ch)
                line_start = False
                i += 1
        elif ch in "}]":
            k = len(out) - 1
            while k >= 0 and out[k].isspace():
                k -= 1
            if k >= 0 and out[k] == ",":
                out[k] = ""
            out.append(ch)
            line_start = False
            i += 1
        else:
            if ch == "\n":
                line_start = True
            elif not ch.isspace():
                line_start = False
            out.append(ch)
            i += 1
    return "".join(out), had


def lenient_load(text: str, probs: list[str]) -> tuple[Any, bool]:
    """The JSON value in `text` (None when there is none) and whether comments were removed."""
    start = min((p for p in (text.find("{"), text.find("[")) if p >= 0), default=-1)
    if start < 0:
        probs.append("no JSON object found")
        return None, False
    if text[:start].strip():
        probs.append(f"text before the JSON object ignored: {text[:start].strip()[:60]!r}")
    body = text[start:]
    try:
        return json.loads(body), False
    except (ValueError, RecursionError):
        pass
    cleaned, had = strip_json_comments(body)
    # drop text after the outermost value
    try:
        value, end = json.JSONDecoder().raw_decode(cleaned)
    except (ValueError, RecursionError) as exc:
        probs.append(f"not valid JSON even after removing comments: {str(exc)[:160]}")
        return None, had
    if cleaned[end:].strip():
        probs.append("text after the JSON object ignored")
    return value, had
