"""npu-smi's own words around its tables: warnings, DCMI failures and their return codes.

Examples (real outputs):
    [WARNING]The driver package may not be completely installed, which may cause function
        abnormal. Please reinstall it.                    -> a warning, `partial_install`
    DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)
    dcmi module initialize failed. ret is -8005           -> an error with return code -8005
    dcmi model initialized failed, because the device is used. ret is -8020
    This device does not support querying ...             -> NOT SUPPORT (not a failure)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.npu_smi._text import _lines

# `ret is -8005`, `ret = -8007`, `return code -8020`, `retCode: -8255` (DCMI callers' logs),
# `error code is -8005`, `errorcode=-8001`.
_CODE_RE = re.compile(
    r"\b(?:ret(?:urn)?|err(?:or)?)(?:[\s_]*code)?\s*(?:is|=|:)?\s*(-8\d{3})\b", re.I
)
_PARTIAL_RE = re.compile(r"may not be completely installed", re.I)
_WARN_RE = re.compile(r"^\s*\[?\s*warn(?:ing)?\s*\]?", re.I)
_ERROR_WORDS = ("failed", "error", "denied", "not permitted", "cannot", "can not")
_NOT_SUPPORT_RE = re.compile(r"not\s+support", re.I)
_MAX_LINE = 300
_MAX_MESSAGES = 20


@dataclass(frozen=True)
class NpuSmiMessages:
    """Lines npu-smi printed outside its tables, sorted into warnings and errors."""

    warnings: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    return_codes: tuple[int, ...] = ()
    not_supported: tuple[str, ...] = ()

    @property
    def partial_install(self) -> str | None:
        """npu-smi's warning that the driver package is not completely installed."""
        return next((w for w in self.warnings if _PARTIAL_RE.search(w)), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "warnings": list(self.warnings),
            "errors": list(self.errors),
            "return_codes": list(self.return_codes),
            "not_supported": list(self.not_supported),
        }


def parse_messages(text: str) -> NpuSmiMessages:
    """npu-smi's warnings, errors and DCMI return codes (table and key/value lines are skipped)."""
    warnings: list[str] = []
    errors: list[str] = []
    unsupported: list[str] = []
    codes: list[int] = []
    for raw in _lines(text):
        line = raw.strip()[:_MAX_LINE]
        if not line or line[0] in "|+" or line.startswith("Legend"):
            continue
        code = _CODE_RE.search(line)
        if code:
            codes.append(int(code.group(1)))
        if _WARN_RE.match(line) or _PARTIAL_RE.search(line):
            warnings.append(line)
        elif _NOT_SUPPORT_RE.search(line) and ":" not in line:
            unsupported.append(line)
        elif (code or any(w in line.lower() for w in _ERROR_WORDS)) and " : " not in line:
            errors.append(line)  # a key/value line such as `Error Code : NA` is not a message
    return NpuSmiMessages(
        tuple(warnings[:_MAX_MESSAGES]),
        tuple(errors[:_MAX_MESSAGES]),
        tuple(dict.fromkeys(codes)),
        tuple(unsupported[:_MAX_MESSAGES]),
    )
