"""What the node's Ascend version files say: driver, firmware, CANN toolkit, nnae, install info."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ascend_audit.facts.keys import FactKey
from ascend_audit.host.base import FileRead


@dataclass(frozen=True)
class VersionFile:
    """One version file: where it was looked for, what reading it gave, and what it says."""

    path: str
    read: FileRead
    parsed: Any = None  # the facts.versions dataclass, None when the file was not read

    @property
    def present(self) -> bool:
        """The file was read."""
        return self.read.ok

    @property
    def missing(self) -> bool:
        """The file does not exist (as opposed to existing but unreadable)."""
        err = (self.read.error or "").lower()
        return not self.read.ok and ("no such file" in err or "not found" in err or not err)

    def evidence(self) -> Any:
        """File evidence with the parsed fields."""
        values = self.parsed.to_dict() if self.parsed is not None else {}
        return self.read.evidence(**values)


@dataclass(frozen=True)
class VersionFiles:
    """What the node's version files say about its driver, firmware and CANN."""

    driver: VersionFile
    firmware: VersionFile
    toolkits: tuple[VersionFile, ...] = ()
    nnae: tuple[VersionFile, ...] = ()
    install_info: VersionFile | None = None
    install_read: VersionFile | None = None  # /etc/ascend_install.info, read or not
    searched: tuple[str, ...] = ()  # CANN locations looked at

    @property
    def toolkit(self) -> VersionFile | None:
        """The CANN toolkit in use: the newest one found (nnae when there is no toolkit)."""
        from ascend_audit.facts.versions import parse_version

        found = [t for t in self.toolkits if t.parsed and t.parsed.version] or [
            t for t in self.nnae if t.parsed and t.parsed.version
        ]
        return max(found, key=lambda t: parse_version(t.parsed.version), default=None)

    @property
    def driver_version(self) -> str | None:
        return self.driver.parsed.version if self.driver.parsed else None

    @property
    def firmware_version(self) -> str | None:
        return self.firmware.parsed.version if self.firmware.parsed else None

    @property
    def cann_version(self) -> str | None:
        tk = self.toolkit
        return tk.parsed.version if tk else None


VERSION_FILES: FactKey[VersionFiles] = FactKey("version_files")
