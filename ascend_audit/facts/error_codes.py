"""Ascend error codes in log lines (ACL, CANN, torch_npu, HCCL, MindIE) and the catalog that
says what each means, which layer it indicts and how to fix it (`data/ascend_error_codes.toml`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "CodeInfo",
    "catalog",
    "describe",
    "find_codes",
]

_DATA = "ascend_error_codes.toml"

# One pass finds every code a line carries; the groups name the kind.
_CODE_RE = re.compile(
    r"(?P<torch_npu>\bERR\d{5}\b)"
    r"|(?P<mindie>\bMIE\d{2}[EWI][0-9A-F]{6}\b)"
    r"|(?<![\w/.-])(?P<cann>E[A-Z]\d{4}|E[1-9]\d{4})(?=[:)\]\s,.]|$)"
    r"|(?:error code is|error code|runtime result =|result =|failed:|retCode=|ret =|ret:|error:)"
    r"\s*(?P<num>-?\d{1,6})\b"
    r"|errNo\[0x0*5(?P<errno>[0-9A-Fa-f]{6})\]"  # HCCL's own log: module 5, HcclResult below
)


@dataclass(frozen=True)
class CodeInfo:
    """What an error code means, the layer it indicts, its likely causes and the fix."""

    code: str
    kind: str  # acl | cann | torch_npu | hccl | mindie
    name: str
    meaning: str
    layer: str  # driver | operator | framework
    causes: tuple[str, ...]
    remediation: str
    source: str
    example: str
    family: bool = False  # described by its family, not listed itself

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "code": self.code,
            "kind": self.kind,
            "name": self.name,
            "meaning": self.meaning,
            "layer": self.layer,
            "causes": list(self.causes),
            "remediation": self.remediation,
            "source": self.source,
            "family": self.family,
        }


@dataclass(frozen=True)
class _Catalog:
    codes: dict[tuple[str, str], CodeInfo]
    families: tuple[tuple[str, str, CodeInfo], ...]  # (kind, prefix, info), longest prefix first
    version: str


def _info(entry: dict[str, Any], family: bool) -> CodeInfo:
    return CodeInfo(
        code=str(entry.get("code") or entry.get("prefix") or ""),
        kind=str(entry.get("kind", "")),
        name=str(entry.get("name", entry.get("prefix", ""))),
        meaning=str(entry.get("meaning", "")),
        layer=str(entry.get("layer", "framework")),
        causes=tuple(str(c) for c in entry.get("causes", ())),
        remediation=str(entry.get("remediation", "")),
        source=str(entry.get("source", "")),
        example=str(entry.get("example", "")),
        family=family,
    )


@lru_cache(maxsize=1)
def catalog() -> _Catalog:
    """The packaged catalog, read once."""
    from importlib import resources

    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]

    data = tomllib.loads(resources.files("ascend_audit.data").joinpath(_DATA).read_text("utf-8"))
    codes = {(str(e["kind"]), str(e["code"])): _info(e, False) for e in data.get("code", ())}
    fams = [(str(e["kind"]), str(e["prefix"]), _info(e, True)) for e in data.get("family", ())]
    fams.sort(key=lambda f: -len(f[1]))
    return _Catalog(codes, tuple(fams), str(data.get("meta", {}).get("version", "")))


def describe(code: str, kind: str) -> CodeInfo | None:
    """The catalog entry of a code, else its family's description marked as not in the catalog
    (code filled in), else None (a kind the catalog has no family for)."""
    cat = catalog()
    hit = cat.codes.get((kind, code))
    if hit is not None:
        return hit
    for fkind, prefix, info in cat.families:
        if fkind == kind and code.startswith(prefix):
            return CodeInfo(
                code,
                kind,
                info.name,
                f"not in the catalog; {info.meaning}",
                info.layer,
                info.causes,
                info.remediation,
                info.source,
                info.example,
                True,
            )
    return None


def find_codes(line: str) -> list[tuple[str, str, int, int]]:
    """(code, kind, start, end) of every error code in a line, in order; never raises."""
    out: list[tuple[str, str, int, int]] = []
    if not isinstance(line, str):
        return out
    hccl = "HCCL function error" in line or "Hccl" in line
    for m in _CODE_RE.finditer(line):
        group = m.lastgroup or ""
        code, kind = (m.group(group), group) if group else ("", "")
        start, end = m.span(group) if group else m.span()
        if kind == "errno":
            code, kind = str(int(code, 16)), "hccl"
        elif kind == "num":
            if code.startswith("-") or code == "0":
                continue  # DCMI / driver return codes are the driver layer's catalog
            kind = "hccl" if hccl and len(code) <= 2 else "acl"
            if kind == "acl" and len(code) < 6:
                continue
        out.append((code, kind, start, end))
    return out
