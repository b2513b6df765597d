"""Node text made inert for a terminal, and printing that never fails on an encoding.

`printable(text)` removes what a terminal would obey instead of show: escape sequences (CSI,
OSC, the other ESC forms and their 8-bit C1 twins), every other C0 control but tab and newline,
C1 controls, DEL and the bidirectional overrides and isolates that reorder what a reader sees.
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# OSC / DCS / SOS / PM / APC strings run to BEL or ST (ESC \ or 0x9c); an unterminated one to
# the end of the line, so it cannot swallow the rest of the report.
_STRING_SEQ = re.compile(
    r"(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?"
)
_CSI = re.compile(r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?")
_ESC = re.compile(r"\x1b[\x20-\x2f]*[\x30-\x7e]?")
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: Any, replacement: str = "") -> str:
    """`text` with escape sequences, controls (but tab and newline) and bidi overrides removed;
    lone surrogates (undecodable bytes) become `?`. Whole sequences are always removed; a lone
    control character becomes `replacement` (default: nothing)."""
    s = text if isinstance(text, str) else str(text)
    if not s:
        return s
    s = s.encode("utf-8", "replace").decode("utf-8")  # lone surrogates → ?
    s = s.replace("\r\n", "\n")
    s = _STRING_SEQ.sub("", s)
    s = _CSI.sub("", s)
    s = _ESC.sub("", s)
    return _CONTROLS.sub(replacement, s)


def encodable(text: str, stream: TextIO) -> str:
    """`text` with what the stream's encoding cannot represent replaced (ASCII, GBK consoles)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        return text.encode(encoding, "replace").decode(encoding, "replace")
    except LookupError:
        return text


class SafeStream:
    """A text stream wrapper whose writes never raise UnicodeEncodeError."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(encodable(text, self._stream))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
