"""Compatibility answers from the packaged tables: torch/torch_npu/CANN/HDK, vllm-ascend, MindIE."""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts import huawei_version as hv

__all__ = [
    "CompatAnswer",
    "CompatRow",
    "base_version",
    "cell_matches",
    "check_cann_hdk",
    "check_mindie",
    "check_torch_npu_cann",
    "check_torch_torch_npu",
    "check_vllm_ascend",
    "load_table",
    "table_version",
    "version_tokens",
]

_TABLE_FILES = {
    "torch_npu": "compat_torch_npu.csv",
    "vllm_ascend_release": "compat_vllm_ascend_release.csv",
    "vllm_ascend_tag_pins": "compat_vllm_ascend_tag_pins.csv",
    "cann_hdk": "compat_cann_hdk.csv",
    "mindie": "compat_mindie.csv",
}
_NA = frozenset({"", "n/a", "na", "not stated", "none", "-"})


@dataclass(frozen=True)
class CompatRow:
    """One row of a packaged table, with its line in the CSV and its source."""

    table: str
    lineno: int
    fields: tuple[tuple[str, str], ...]

    def get(self, column: str, default: str = "") -> str:
        """A column's value."""
        return dict(self.fields).get(column, default)

    @property
    def source(self) -> str:
        """Where the row was published."""
        return self.get("source")

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {"table": self.table, "lineno": self.lineno, **dict(self.fields)}


@dataclass(frozen=True)
class CompatAnswer:
    """A verdict (`ok`, `bad`, `unknown`) on one pairing, with the rows it stands on."""

    question: str
    verdict: str
    reason: str
    table: str
    table_version: str
    rows: tuple[CompatRow, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def sources(self) -> tuple[str, ...]:
        """Distinct sources of the rows, in order."""
        return tuple(dict.fromkeys(r.source for r in self.rows if r.source))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "question": self.question,
            "verdict": self.verdict,
            "reason": self.reason,
            "table": self.table,
            "table_version": self.table_version,
            "rows": [r.to_dict() for r in self.rows],
            "sources": list(self.sources),
            "problems": list(self.problems),
        }


# --- loading ----------------------------------------------------------------------------------


def _read_resource(name: str) -> str:
    from importlib import resources  # lazy: only version checks need the tables

    return resources.files("ascend_audit.data").joinpath(name).read_text(encoding="utf-8")


@functools.cache
def _meta() -> dict[str, Any]:
    try:
        data = json.loads(_read_resource("compat_meta.json"))
        return data if isinstance(data, dict) else {}
    except Exception:
        return {}


def table_version() -> str:
    """The date of the reference snapshot the packaged tables were built from."""
    v = _meta().get("table_version")
    return v if isinstance(v, str) else "unknown"


@functools.cache
def _load(name: str) -> tuple[tuple[CompatRow, ...], str | None]:
    fname = _TABLE_FILES.get(name)
    if fname is None:
        return (), f"no table named {name!r}"
    try:
        text = _read_resource(fname)
    except Exception as exc:
        return (), f"table {fname} unreadable: {type(exc).__name__}: {exc}"
    rows = []
    reader = csv.DictReader(io.StringIO(text))
    for row in reader:
        fields = tuple((k, (v or "").strip()) for k, v in row.items() if k is not None)
        rows.append(CompatRow(name, reader.line_num, fields))
    return tuple(rows), None


def load_table(name: str) -> tuple[CompatRow, ...]:
    """All rows of one packaged table (empty when it cannot be read)."""
    return _load(name)[0]


# --- versions ---------------------------------------------------------------------------------

_TOKEN_RE = re.compile(r"\d+|[a-z]+")


def version_tokens(version: str | None) -> tuple[int | str, ...]:
    """`2.9.0.post2` -> (2, 9, 0, 'post', 2); `8.3.RC1` -> (8, 3, 'rc', 1); local `+cpu` dropped."""
    if not isinstance(version, str):
        return ()
    s = re.sub(r"\(.*?\)", "", version).strip().lower()
    s = s[1:] if s.startswith("v") else s
    s = s.split("+", 1)[0]
    return tuple(int(t) if t.isdigit() else t for t in _TOKEN_RE.findall(s))


def base_version(version: str | None) -> tuple[int, ...]:
    """The leading numeric release (`2.9.0.post2` -> (2, 9, 0)); empty when there is none."""
    out: list[int] = []
    for t in version_tokens(version):
        if not isinstance(t, int):
            break
        out.append(t)
    return tuple(out[:3])


def _local(version: str | None) -> str:
    return version.split("+", 1)[1].lower() if isinstance(version, str) and "+" in version else ""


def cell_matches(pattern: str, version: str) -> bool:
    """Whether a version matches a table cell: exact, `25.0.X` wildcard, or one of `a/b;c`
    (a `>=` minimum matches nothing here)."""
    for alt in re.split(r"[/;]", pattern):
        alt = alt.strip()
        if not alt or alt.startswith(">="):
            continue
        if hv.matches(version, alt):  # Huawei grammar: a build or patch matches its release
            return True
        pt = version_tokens(alt)
        vt = version_tokens(version)
        if "x" in pt:
            prefix = pt[: pt.index("x")]
            if vt[: len(prefix)] == prefix and len(vt) > len(prefix):
                return True
        elif pt and pt == vt:
            return True
    return False


def _same_line(a: str, b: str) -> bool:
    """Same major.minor (e.g. CANN 8.5.0 and 8.5.1), both plain numeric releases."""
    ta, tb = version_tokens(a), version_tokens(b)
    return (
        len(ta) >= 3
        and len(tb) >= 3
        and ta[:2] == tb[:2]
        and all(isinstance(t, int) for t in ta[:3] + tb[:3])
    )


def _answer(
    question: str, verdict: str, reason: str, table: str, rows: Any = (), problems: Any = ()
) -> CompatAnswer:
    return CompatAnswer(
        question, verdict, reason, table, table_version(), tuple(rows), tuple(problems)
    )


def _rows(name: str) -> tuple[tuple[CompatRow, ...], list[str]]:
    rows, problem = _load(name)
    return rows, [problem] if problem else []


def _text(v: object) -> str:
    """A given version, stripped; empty when it is missing or not a string."""
    return v.strip() if isinstance(v, str) else ""


# --- torch <-> torch_npu <-> CANN -------------------------------------------------------------


def _dotted(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def check_torch_torch_npu(torch: str | None, torch_npu: str | None) -> CompatAnswer:
    """torch and torch_npu must share the base release (torch_npu 2.9.0.post2 pins torch 2.9.0)."""
    q = f"torch {torch} with torch_npu {torch_npu}"
    rows, problems = _rows("torch_npu")
    torch, torch_npu = _text(torch), _text(torch_npu)
    if not torch or not torch_npu:
        return _answer(q, "unknown", "a version is missing", "torch_npu", (), problems)
    tb, nb = base_version(torch), base_version(torch_npu)
    if len(tb) < 2 or len(nb) < 2:
        return _answer(q, "unknown", "a version cannot be parsed", "torch_npu", (), problems)
    local = _local(torch)
    if local.startswith(("cu", "rocm")):
        return _answer(
            q,
            "bad",
            f"torch is a {local} build; torch_npu needs the CPU build of torch",
            "torch_npu",
            (),
            problems,
        )
    exact = [r for r in rows if version_tokens(r.get("torch_npu")) == version_tokens(torch_npu)]
    if exact:
        want = base_version(exact[0].get("torch"))
        if want == tb:
            return _answer(
                q,
                "ok",
                f"torch_npu {torch_npu} is built for torch {exact[0].get('torch')}",
                "torch_npu",
                exact,
                problems,
            )
        return _answer(
            q,
            "bad",
            f"torch_npu {torch_npu} is built for torch {exact[0].get('torch')}, not {torch}",
            "torch_npu",
            exact,
            problems,
        )
    same = [r for r in rows if base_version(r.get("torch_npu")) == nb]
    if nb == tb:
        return _answer(
            q,
            "ok",
            "same base release (torch_npu pins torch==<its base version>)",
            "torch_npu",
            same,
            problems,
        )
    return _answer(
        q,
        "bad",
        f"base releases differ: torch {_dotted(tb)} vs torch_npu {_dotted(nb)}",
        "torch_npu",
        same,
        problems,
    )


def check_torch_npu_cann(torch_npu: str | None, cann: str | None) -> CompatAnswer:
    """torch_npu against CANN: the adapter table, plus the pairings vllm-ascend releases ship."""
    q = f"torch_npu {torch_npu} with CANN {cann}"
    rows, problems = _rows("torch_npu")
    torch_npu, cann = _text(torch_npu), _text(cann)
    if not torch_npu or not cann:
        return _answer(q, "unknown", "a version is missing", "torch_npu", (), problems)
    want = version_tokens(torch_npu)
    exact = [r for r in rows if version_tokens(r.get("torch_npu")) == want]
    rel, p2 = _rows("vllm_ascend_release")
    problems += p2
    shipped = [r for r in rel if version_tokens(r.get("torch_npu")) == want]
    for r in exact + shipped:
        col = "cann" if r.table == "torch_npu" else "stable_cann"
        if cell_matches(r.get(col), cann):
            return _answer(
                q, "ok", f"documented pairing ({r.table} table)", "torch_npu", [r], problems
            )
    if exact or shipped:
        documented = sorted({r.get("cann") or r.get("stable_cann") for r in exact + shipped})
        near = [c for c in documented if _same_line(c, cann)]
        if near:
            return _answer(
                q,
                "unknown",
                f"documented with CANN {', '.join(documented)}; {cann} is another patch "
                "of that line and is not listed",
                "torch_npu",
                exact + shipped,
                problems,
            )
        return _answer(
            q,
            "bad",
            f"torch_npu {torch_npu} is documented with CANN {', '.join(documented)}",
            "torch_npu",
            exact + shipped,
            problems,
        )
    hints = [r for r in rows if base_version(r.get("torch_npu")) == base_version(torch_npu)]
    return _answer(
        q,
        "unknown",
        f"torch_npu {torch_npu} is not in the table of version {table_version()}",
        "torch_npu",
        hints,
        problems,
    )


# --- vllm-ascend release table ----------------------------------------------------------------


def _python_ok(spec: str, python: str) -> bool | None:
    """Evaluate a `>= 3.10, < 3.12` style specifier on a Python version; None if unparsable."""
    have = base_version(python)
    if len(have) < 2:
        return None
    for clause in spec.split(","):
        m = re.match(r"\s*(>=|<=|<|>|==)\s*([\d.]+)\s*$", clause)
        if not m:
            return None
        want = tuple(int(x) for x in m.group(2).split("."))
        cur = have[: len(want)]
        ok = {
            ">=": cur >= want,
            "<=": cur <= want,
            "<": cur < want,
            ">": cur > want,
            "==": cur == want,
        }[m.group(1)]
        if not ok:
            return False
    return True


def check_vllm_ascend(
    vllm_ascend: str | None,
    *,
    vllm: str | None = None,
    cann: str | None = None,
    torch: str | None = None,
    torch_npu: str | None = None,
    triton_ascend: str | None = None,
    python: str | None = None,
) -> CompatAnswer:
    """The installed stack against the vllm-ascend release row (and that tag's pinned files)."""
    given = {
        k: _text(v)
        for k, v in {
            "vllm": vllm,
            "cann": cann,
            "torch": torch,
            "torch_npu": torch_npu,
            "triton_ascend": triton_ascend,
            "python": python,
        }.items()
        if _text(v)
    }
    q = f"vllm-ascend {vllm_ascend} with " + (
        ", ".join(f"{k} {v}" for k, v in given.items()) or "nothing else"
    )
    rows, problems = _rows("vllm_ascend_release")
    pins, p2 = _rows("vllm_ascend_tag_pins")
    problems += p2
    vllm_ascend = _text(vllm_ascend)
    if not vllm_ascend:
        return _answer(
            q, "unknown", "vllm-ascend version is missing", "vllm_ascend_release", (), problems
        )
    want = version_tokens(vllm_ascend)
    row = next((r for r in rows if version_tokens(r.get("vllm_ascend")) == want), None)
    pin = next((r for r in pins if version_tokens(r.get("vllm_ascend_tag")) == want), None)
    if row is None and "dev" in want:
        # A development build (`0.11.0rc1.dev`, `0.9.1.dev12+g…`) is judged by the release it
        # leads to; a match there proves nothing about the build's own pins.
        base = re.split(r"[.+-]?dev", vllm_ascend, maxsplit=1, flags=re.I)[0]
        a = check_vllm_ascend(
            base,
            vllm=vllm,
            cann=cann,
            torch=torch,
            torch_npu=torch_npu,
            triton_ascend=triton_ascend,
            python=python,
        )
        if a.rows:
            ok = a.verdict == "ok"
            why = "its release's stack matches, but a dev build may pin others" if ok else a.reason
            return _answer(
                q,
                "unknown" if ok else a.verdict,
                f"a development build of {base}: {why}",
                a.table,
                a.rows,
                a.problems,
            )
    if row is None:
        return _answer(
            q,
            "unknown",
            f"vllm-ascend {vllm_ascend} is not in the release table of version {table_version()}",
            "vllm_ascend_release",
            [pin] if pin else [],
            problems,
        )
    used = [row] + ([pin] if pin else [])
    bad: list[str] = []
    near: list[str] = []
    for comp, have in given.items():
        if comp == "python":
            spec = row.get("python")
            res = _python_ok(spec, have) if spec.lower() not in _NA else None
            if res is False:
                bad.append(f"python {have} outside {spec}")
            continue
        if comp == "cann":
            allowed = [row.get("stable_cann")]
            if pin:
                m = re.search(r"cann:([\w.]+?)-", pin.get("dockerfile_base_image"))
                if m:
                    allowed.append(m.group(1).upper())
        elif comp == "torch_npu":
            allowed = [row.get("torch_npu")]
            if pin:
                m = re.search(r"torch[-_]npu==(\S+)", pin.get("requirements_torch_npu"))
                if m:
                    allowed.append(m.group(1))
        else:
            allowed = [row.get(comp)]
        allowed = [a for a in allowed if a and a.lower() not in _NA]
        if not allowed:
            continue
        if comp == "torch":
            if any(base_version(a) == base_version(have) for a in allowed):
                continue
        elif any(cell_matches(a, have) for a in allowed):
            continue
        if any(
            _same_line(a, have) if comp == "cann" else base_version(a) == base_version(have)
            for a in allowed
        ):
            near.append(f"{comp} {have} (table: {' or '.join(dict.fromkeys(allowed))})")
        else:
            bad.append(f"{comp} {have} (table: {' or '.join(dict.fromkeys(allowed))})")
    if bad:
        return _answer(
            q,
            "bad",
            "not the release's stack: " + "; ".join(bad),
            "vllm_ascend_release",
            used,
            problems,
        )
    if near:
        return _answer(
            q,
            "unknown",
            "close to but not the release's stack: " + "; ".join(near),
            "vllm_ascend_release",
            used,
            problems,
        )
    if not given:
        return _answer(
            q,
            "unknown",
            "release is known; nothing given to compare",
            "vllm_ascend_release",
            used,
            problems,
        )
    return _answer(q, "ok", "matches the release row", "vllm_ascend_release", used, problems)


# --- MindIE -----------------------------------------------------------------------------------


def check_mindie(
    mindie: str | None,
    *,
    cann: str | None = None,
    torch_npu: str | None = None,
    hdk: str | None = None,
) -> CompatAnswer:
    """MindIE against CANN, torch_npu (via the PTA release it names) and the driver."""
    q = f"MindIE {mindie} with CANN {cann}, torch_npu {torch_npu}, HDK {hdk}"
    rows, problems = _rows("mindie")
    mindie, cann, torch_npu, hdk = _text(mindie), _text(cann), _text(torch_npu), _text(hdk)
    if not mindie:
        return _answer(q, "unknown", "MindIE version is missing", "mindie", (), problems)
    row = next((r for r in rows if version_tokens(r.get("mindie")) == version_tokens(mindie)), None)
    if row is None:
        return _answer(
            q,
            "unknown",
            f"MindIE {mindie} is not in the table of version {table_version()}",
            "mindie",
            (),
            problems,
        )
    bad: list[str] = []
    near: list[str] = []
    if cann and row.get("cann").lower() not in _NA and not cell_matches(row.get("cann"), cann):
        (near if _same_line(row.get("cann"), cann) else bad).append(
            f"CANN {cann} (table: {row.get('cann')})"
        )
    if hdk and row.get("hdk").lower() not in _NA and not cell_matches(row.get("hdk"), hdk):
        bad.append(f"HDK {hdk} (table: {row.get('hdk')})")
    extra: list[CompatRow] = []
    pta_text = row.get("torch_torch_npu_or_PTA")
    if torch_npu and pta_text.lower() not in _NA:
        bases = {
            tuple(int(x) for x in m.split("."))
            for m in re.findall(r"torch/torch_npu (\d+\.\d+\.\d+)", pta_text)
        }
        ptas = re.findall(r"PTA (\d+\.\d+\.\d+)", pta_text)
        npu_rows, p2 = _rows("torch_npu")
        problems += p2
        pta_rows = [
            r for r in npu_rows if any(r.get("gitcode_branch").endswith("-" + p) for p in ptas)
        ]
        allowed = bases or {base_version(r.get("torch_npu")) for r in pta_rows}
        extra = [r for r in pta_rows if base_version(r.get("torch_npu")) in allowed]
        if allowed and base_version(torch_npu) not in allowed:
            bad.append(f"torch_npu {torch_npu} (table: {pta_text})")
    used = [row, *extra]
    if bad:
        return _answer(q, "bad", "; ".join(bad), "mindie", used, problems)
    if near:
        return _answer(
            q,
            "unknown",
            "close to but not the documented stack: " + "; ".join(near),
            "mindie",
            used,
            problems,
        )
    if not cann and not torch_npu and not hdk:
        return _answer(
            q, "unknown", "MindIE is known; nothing given to compare", "mindie", used, problems
        )
    return _answer(q, "ok", "matches the MindIE row", "mindie", used, problems)


# --- CANN <-> driver (HDK) --------------------------------------------------------------------


def check_cann_hdk(
    cann: str | None, hdk: str | None, products: tuple[str, ...] = ()
) -> CompatAnswer:
    """CANN against the driver (HDK) release: explicit N rows win, then Y rows, then minimums.

    A row scoped to a product (`product` column: MindSDK, MindIE, …) applies only where that
    product is in use (PRODUCTS); a build or patch matches its release's rows."""
    q = f"CANN {cann} with HDK {hdk}"
    rows, problems = _rows("cann_hdk")
    cann, hdk = _text(cann), _text(hdk)
    if not cann or not hdk:
        return _answer(q, "unknown", "a version is missing", "cann_hdk", (), problems)
    explicit = [
        r
        for r in rows
        if not r.get("cann").startswith(">=")
        and cell_matches(r.get("cann"), cann)
        and cell_matches(r.get("hdk"), hdk)
    ]
    no = [r for r in explicit if r.get("compatible").upper() == "N"]
    yes = [r for r in explicit if r.get("compatible").upper() == "Y"]
    if no:
        return _answer(q, "bad", "listed as incompatible", "cann_hdk", no, problems)
    if yes:
        return _answer(q, "ok", "listed as compatible", "cann_hdk", yes, problems)
    in_use = {p.lower() for p in products}
    for r in rows:
        c, h = r.get("cann"), r.get("hdk")
        if r.get("product") and r.get("product").lower() not in in_use:
            continue  # e.g. MindSDK's minimum does not bind a node without MindSDK
        ranged = c.startswith(">=") and h.startswith(">=")
        if ranged and (hv.compare(cann, c[2:]) < 0 or hv.compare(hdk, h[2:]) < 0):
            return _answer(
                q,
                "bad",
                f"below the documented minimum (CANN {c}, HDK {h}; {r.get('kind')})",
                "cann_hdk",
                [r],
                problems,
            )
    same_cann = [
        r for r in rows if not r.get("cann").startswith(">=") and cell_matches(r.get("cann"), cann)
    ]
    return _answer(
        q,
        "unknown",
        f"pairing not in the table of version {table_version()}",
        "cann_hdk",
        same_cann,
        problems,
    )
