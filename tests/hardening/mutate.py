"""Hypothesis strategies: arbitrary text/bytes and real fixtures mutated the way outputs break."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import strategies as st

_SEPS = re.compile(r"(\s*\|\s*|,|\t|\s{2,})")

# Text that looks like tool output: table rules, separators, numbers, keys and the odd control char.
_TOKENS = st.sampled_from(
    [
        "|",
        "+",
        "=",
        "-",
        ":",
        ",",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "NPU",
        "Chip",
        "Health",
        "OK",
        "NA",
        "0000:C1:00.0",
        "910B3",
        "24.1.rc3",
        "Version",
        "{",
        "}",
        "[",
        "]",
        '"',
        "'",
        "\\",
        "0",
        "1",
        "-1",
        "99999999999999999999",
        "1e309",
        "nan",
        "%",
        "GT/s",
        "0x19e5",
        "\x00",
        "\x1b[31m",
        "é",
        "𝔘",
        "\ufeff",
        "device_id",
        "server_list",
        "rank_id",
        "Op Type",
        "Duration(us)",
        "Accelerator Core",
        "AI_CPU",
        "model:",
        "ERROR",
        "Traceback",
    ]
)
tool_text = st.lists(st.one_of(_TOKENS, st.text(max_size=12)), max_size=60).map("".join)
any_text = st.one_of(st.text(max_size=400), tool_text)
any_bytes = st.binary(max_size=400)


def _mutate_lines(lines: list[str], data, ops: int) -> list[str]:
    for _ in range(ops):
        if not lines:
            lines = [""]
        op = data.draw(st.sampled_from(["trunc", "del", "dup", "delcol", "dupcol", "swap", "junk"]))
        i = data.draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        if op == "trunc":
            cut = data.draw(st.integers(0, sum(len(x) + 1 for x in lines)))
            text = "\n".join(lines)[:cut]
            lines = text.split("\n")
        elif op == "del":
            del lines[i]
        elif op == "dup":
            lines.insert(i, line)
        elif op in ("delcol", "dupcol"):
            parts = _SEPS.split(line)
            cells = parts[0::2]
            if cells:
                j = data.draw(st.integers(0, len(cells) - 1))
                if op == "delcol":
                    del parts[2 * j : 2 * j + 2]
                else:
                    parts.insert(2 * j, cells[j])
                    parts.insert(2 * j + 1, parts[2 * j + 2] if len(parts) > 2 * j + 2 else " ")
                lines[i] = "".join(parts)
        elif op == "swap":
            j = data.draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines.insert(i, data.draw(any_text))
    return lines


@st.composite
def mutated(draw, texts: list[str]) -> str:
    """One of `texts` (real outputs) truncated, with lines and columns deleted or duplicated."""
    if not texts:
        return draw(any_text)
    text = draw(st.sampled_from(texts))
    ops = draw(st.integers(0, 6))

    class _D:
        def draw(self, s):
            return draw(s)

    return "\n".join(_mutate_lines(text.split("\n"), _D(), ops))


def hostile(texts: list[str]):
    """Arbitrary text, or a mutated real fixture (weighted towards the fixtures)."""
    return st.one_of(any_text, mutated(texts), mutated(texts))


def read_all(paths: list[Path]) -> list[str]:
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


_JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.just([]),
    st.just({}),
    st.just([None, "x", 1]),
    st.just({"argv": 1, "stdout": "../../etc/passwd"}),
)


def _paths(obj, prefix=(), out=None, limit=400):
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    out.append(prefix)
    if isinstance(obj, dict):
        for k, v in list(obj.items())[:40]:
            _paths(v, (*prefix, k), out, limit)
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:8]):
            _paths(v, (*prefix, i), out, limit)
    return out


@st.composite
def json_mutated(draw, doc):
    """A deep copy of `doc` with a few values replaced, deleted or duplicated at random paths."""
    import copy

    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return draw(_JSON_LEAVES)
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = draw(st.sampled_from(["replace", "replace", "delete", "dup"]))
        if op == "replace":
            parent[key] = draw(_JSON_LEAVES)
        elif op == "delete":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
        else:
            parent[str(key) + "_"] = copy.deepcopy(parent[key])
    return doc
