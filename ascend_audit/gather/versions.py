"""Ascend version files: driver, firmware, CANN toolkit, nnae, /etc/ascend_install.info."""

from __future__ import annotations

import posixpath
from typing import Any

from ascend_audit.context import Context, gatherer
from ascend_audit.facts.version_files import VERSION_FILES, VersionFile, VersionFiles
from ascend_audit.host.base import Host

ASCEND_HOME = "/usr/local/Ascend"
INSTALL_INFO = "/etc/ascend_install.info"
ARCHES = ("aarch64", "x86_64")
TOOLKIT_NAME = "ascend_toolkit_install.info"
NNAE_NAME = "ascend_nnae_install.info"


def _read(host: Host, path: str, parser: Any) -> VersionFile:
    read = host.read_text(path)
    return VersionFile(path, read, parser(read.text) if read.ok else None)


def _first_present(host: Host, paths: list[str], parser: Any) -> VersionFile:
    """The first of PATHS that reads; else the first path's failure."""
    files = []
    for p in dict.fromkeys(paths):
        vf = _read(host, p, parser)
        if vf.present:
            return vf
        files.append(vf)
    return files[0]


def cann_candidates(host: Host, name: str, roots: tuple[str, ...]) -> list[str]:
    """Install-info paths under each root's `<arch>-linux` dirs (both arches, and any globbed)."""
    out: list[str] = []
    for root in roots:
        dirs = [f"{root}/{a}-linux" for a in ARCHES] + host.glob(f"{root}/*-linux")
        out += [f"{d}/{name}" for d in dirs]
        out.append(f"{root}/{name}")
    return list(dict.fromkeys(out))


def _cann_files(host: Host, name: str, roots: tuple[str, ...], parser: Any) -> list[VersionFile]:
    found = []
    seen: set[str] = set()
    for path in cann_candidates(host, name, roots):
        if not host.exists(path):
            continue
        real = host.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        read = host.read_text(path)
        found.append(VersionFile(path, read, parser(read.text, path) if read.ok else None))
    return found


@gatherer(VERSION_FILES, "driver")
def version_files(ctx: Context) -> VersionFiles:
    from ascend_audit.facts.versions import (
        parse_ascend_install_info,
        parse_driver_version_info,
        parse_firmware_version_info,
        parse_toolkit_install_info,
    )

    host = ctx.host
    install = _read(host, INSTALL_INFO, parse_ascend_install_info)
    drv_base = fw_base = ASCEND_HOME
    if install.parsed is not None:
        drv_base = (install.parsed.driver_install_path or ASCEND_HOME).rstrip("/") or "/"
        fw_base = (install.parsed.firmware_install_path or ASCEND_HOME).rstrip("/") or "/"
    driver = _first_present(
        host,
        [posixpath.join(drv_base, "driver/version.info"), f"{ASCEND_HOME}/driver/version.info"],
        parse_driver_version_info,
    )
    firmware = _first_present(
        host,
        [posixpath.join(fw_base, "firmware/version.info"), f"{ASCEND_HOME}/firmware/version.info"],
        parse_firmware_version_info,
    )
    tk_roots = (f"{ASCEND_HOME}/ascend-toolkit/latest", f"{ASCEND_HOME}/cann")
    nnae_roots = (f"{ASCEND_HOME}/nnae/latest",)
    return VersionFiles(
        driver=driver,
        firmware=firmware,
        toolkits=tuple(_cann_files(host, TOOLKIT_NAME, tk_roots, parse_toolkit_install_info)),
        nnae=tuple(_cann_files(host, NNAE_NAME, nnae_roots, parse_toolkit_install_info)),
        install_info=install if install.present else None,
        install_read=install,
        searched=(*(f"{r}/<arch>-linux/{TOOLKIT_NAME}" for r in tk_roots), f"{nnae_roots[0]}"),
    )


def inventory(facts: dict[str, Any]) -> dict[str, Any]:
    """Driver, firmware and CANN versions, and what each NPU's board reports."""
    versions: dict[str, Any] = {}
    vf = facts.get("version_files")
    if vf is not None:
        tk = vf.toolkit
        versions.update(
            {
                "driver": vf.driver_version,
                "driver_inner": vf.driver.parsed.inner_version if vf.driver.parsed else None,
                "firmware": vf.firmware_version,
                "cann": vf.cann_version,
                "cann_path": tk.path if tk else None,
                "nnae": next((n.parsed.version for n in vf.nnae if n.parsed), None),
            }
        )
    boards = facts.get("npu_boards")
    if boards is not None:
        fw, sw = boards.firmware_versions(), boards.software_versions()
        versions["npus"] = {
            str(n): {"firmware": fw.get(n), "software": sw.get(n)}
            for n in dict.fromkeys([*fw, *sw])
        }
    return {"versions": versions} if versions else {}
