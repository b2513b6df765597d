"""The Huawei version grammar: one ordering and one matching rule for driver, firmware and CANN.

A version is dot-separated tokens, case-insensitive. Numbers are release parts; `rcN` a release
candidate; `alphaN`, `betaN` and `TN` pre-releases (of what comes before them); `bN` / `BN` a build
of what comes before it; a number after an `rc` (or after the third number) a patch of it.
Pre-releases sort before the release, builds and patches after it:

    alpha < beta < RC < final                8.0.RC3.alpha001 < 8.0.RC3.beta1 < 8.0.RC3 < 8.0.0
    a build sorts after its release          24.1.rc1 < 24.1.rc1.b030 < 24.1.rc2
    a patch sorts after its release          24.1.rc2 < 24.1.rc2.2 < 24.1.rc3; 25.0.rc1 < 25.0.rc1.1
    RCs before the final release             23.0.rc3 < 23.0.0 < 23.0.3 < 24.1.0 < 24.1.0.3 < 24.1.1
    test builds are pre-releases             7.8.T5.0.B028 < 7.8.0
    firmware: five numbers                   7.5.0.1.129 < 7.7.0.6.236 < 7.8.0.6.201
    case and build zeros do not matter       8.1.RC1 == 8.1.rc1; 24.1.rc1.b030 == 24.1.RC1.B30

| text                     | release_of (matches that release's compatibility rows) |
|--------------------------|---------------------------------------------------------|
| `24.1.rc1.b030`          | `24.1.rc1` (a build)                                    |
| `24.1.rc2.2`             | `24.1.rc2` (a patch)                                    |
| `25.0.rc1.1`             | `25.0.rc1` (a patch)                                    |
| `24.1.0.3`               | `24.1.0` (a patch)                                      |
| `8.0.0.B100`             | `8.0.0` (a build)                                       |
| `8.0.RC3.alpha002`       | `8.0.RC3.alpha002` (a pre-release is not its release)   |
| `7.5.0.1.129`            | `7.5.0.1.129` (firmware: all five numbers are its name) |

Inner versions (`V100R001C15SPC006B220`, old grammar `C77B220SPC008`) order by V, R, C, SPC, B;
their family (`V100R001C15`) is what `compatible_version=[V100R001C15],…` lists.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

_TOKEN_RE = re.compile(r"^([a-z]*)(\d*)$")
_INNER_RE = re.compile(r"^V(\d{1,4})R(\d{1,4})C(\d{1,4})((?:(?:SPC|B)\d{1,6})*)$", re.I)
_INNER_PART_RE = re.compile(r"(SPC|B)(\d{1,6})", re.I)
_PRE = {"t": 0, "alpha": 1, "a": 1, "beta": 2}
RC, END, NUM, BUILD = 3, 4, 5, 6
PAD = (END, 0, "")
Token = tuple[int, int, str]


def tokens(version: str) -> tuple[Token, ...]:
    """The weighted tokens of a version (see the module docstring); unknown words keep text."""
    out: list[Token] = []
    for part in (version or "").strip().lower().split("."):
        if not part:
            continue
        m = _TOKEN_RE.match(part[:40])
        if m is None:
            out.append((END, 0, part[:40]))
            continue
        word, digits = m.group(1), m.group(2)
        num = int(digits[:18]) if digits else 0
        if not word:
            out.append((NUM, num, ""))
        elif word == "rc":
            out.append((RC, num, ""))
        elif word in _PRE:
            out.append((_PRE[word], num, ""))
        elif word == "b":
            out.append((BUILD, num, ""))
        else:
            out.append((END, num, word))
    return tuple(out)


def compare(a: str, b: str) -> int:
    """-1, 0 or 1 as version a sorts before, equal to, or after b (the shorter one is padded with
    the release end marker, so `24.1.rc1` sorts between `24.1.rc1.alpha1` and `24.1.rc1.b030`)."""
    ta, tb = tokens(a), tokens(b)
    n = max(len(ta), len(tb))
    ka, kb = (*ta, *([PAD] * (n - len(ta)))), (*tb, *([PAD] * (n - len(tb))))
    return (ka > kb) - (ka < kb)


def sort_key(version: str) -> Any:
    """A key for sorted() / max() that orders versions as compare() does."""
    return functools.cmp_to_key(compare)(version)


def same(a: str | None, b: str | None) -> bool:
    """Two version strings name the same version (`8.1.RC1` == `8.1.rc1`)."""
    return bool(a and b) and compare(a or "", b or "") == 0


def is_prerelease(version: str) -> bool:
    """alpha, beta or T (test) builds: not a release to serve production on."""
    return any(t[0] < RC for t in tokens(version))


def release_of(version: str) -> str:
    """The release a build or patch belongs to (see the table above); the version itself else."""
    toks = tokens(version)
    if len(toks) >= 5 and all(t[0] == NUM for t in toks):
        return version.strip()  # firmware 7.5.0.1.129: five numbers name one release
    parts = version.strip().split(".")
    keep = 0
    numbers = 0
    for i, t in enumerate(toks):
        if t[0] == RC:
            keep = i + 1
            break
        if t[0] == NUM:
            numbers += 1
            keep = i + 1
            if numbers == 3:
                break
        elif t[0] < RC:
            return version.strip()  # a pre-release is not its release
        else:
            break
    rest = toks[keep:]
    if any(t[0] < RC for t in rest):
        return version.strip()
    return ".".join(p for p in parts[:keep] if p) if keep else version.strip()


def in_range(version: str, low: str, high: str) -> bool:
    """low <= version <= high; a `low` is also met by the versions it prefixes, and a `high`
    ending in `.` admits everything under that prefix (`[24.1,24.1.]` is the 24.1 family)."""
    toks = tokens(version)
    if not toks:
        return False
    lo = tokens(low)
    if lo and compare(version, low) < 0 and toks[: len(lo)] != lo:  # `24.1` admits 24.1.rc3
        return False
    h = high.strip()
    if not h:
        return True
    if h.endswith("."):
        prefix = tokens(h)
        return compare(version, h) <= 0 or tokens(version)[: len(prefix)] == prefix
    return compare(version, h) <= 0


def matches(version: str, row: str) -> bool:
    """Whether a version matches one compatibility-table cell: the same release (a build or patch
    matches its release's rows), or a `25.0.X` family wildcard."""
    cell = row.strip()
    if not cell or not tokens(version):
        return False
    if cell.lower().endswith(".x"):
        prefix = tokens(cell[:-2])
        toks = tokens(version)
        return toks[: len(prefix)] == prefix and len(toks) > len(prefix)
    return same(version, cell) or same(release_of(version), cell)


# --------------------------------------------------------------------------- inner versions


@dataclass(frozen=True, order=True)
class InnerVersion:
    """`V100R001C15SPC006B220`: version, release, C (family), SPC patch, B build."""

    v: int
    r: int
    c: int
    spc: int = 0
    b: int = 0

    @property
    def family(self) -> tuple[int, int, int]:
        return (self.v, self.r, self.c)


def parse_inner(text: str) -> InnerVersion | None:
    """An inner version, None when TEXT is not one."""
    m = _INNER_RE.match((text or "").strip())
    if not m:
        return None
    parts = {k.upper(): int(n) for k, n in _INNER_PART_RE.findall(m.group(4))}
    return InnerVersion(
        int(m.group(1)), int(m.group(2)), int(m.group(3)), parts.get("SPC", 0), parts.get("B", 0)
    )


def family_in(inner: str, low: str, high: str | None = None) -> bool | None:
    """Whether INNER's family lies within [low, high] families (one family when high is None)."""
    got, lo, hi = parse_inner(inner), parse_inner(low), parse_inner(high or low)
    if got is None or lo is None or hi is None:
        return None
    return lo.family <= got.family <= hi.family
