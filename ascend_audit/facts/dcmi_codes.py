"""The DCMI / npu-smi return-code catalog (data/dcmi_codes.toml): meaning, fix, source."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Any

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]


@dataclass(frozen=True)
class DcmiCode:
    """One catalog entry."""

    code: int
    name: str
    meaning: str
    remediation: str
    sources: tuple[str, ...]

    def describe(self) -> str:
        """`-8005 DCMI_ERR_CODE_INNER_ERR: meaning`."""
        return f"{self.code} {self.name}: {self.meaning}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "meaning": self.meaning,
            "remediation": self.remediation,
            "sources": list(self.sources),
        }


@functools.cache
def catalog() -> dict[int, DcmiCode]:
    """Every entry of the catalog, by code."""
    text = resources.files("ascend_audit.data").joinpath("dcmi_codes.toml").read_text("utf-8")
    out: dict[int, DcmiCode] = {}
    for key, entry in tomllib.loads(text).items():
        out[int(key)] = DcmiCode(
            int(key),
            str(entry["name"]),
            str(entry["meaning"]),
            str(entry["remediation"]),
            tuple(str(s) for s in entry.get("sources", ())),
        )
    return out


def lookup(code: int) -> DcmiCode | None:
    """The catalog entry of a return code, None when the catalog does not know it."""
    return catalog().get(code)
