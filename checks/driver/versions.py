"""Version parity: driver with firmware (files and what each NPU runs), CANN toolkit with driver."""

from __future__ import annotations

from typing import Any

from ascend_audit.context import Context
from ascend_audit.facts.container import CONTAINER
from ascend_audit.facts.driver_scan import NPU_SMI
from ascend_audit.facts.npu_details import NPU_BOARDS
from ascend_audit.facts.version_files import VERSION_FILES
from ascend_audit.model import Evidence, Outcome, Status, error, fail, passed, warn
from ascend_audit.registry import check

_RANK = (Status.FAIL, Status.ERROR, Status.WARN)


def note(text: str) -> Outcome:
    """A finding that does not change the verdict but belongs in the summary."""
    return passed(text)


def fold(findings: list[Outcome], ok: str, evidence: list[Evidence], **metrics: Any) -> Outcome:
    """Worst finding wins (FAIL, ERROR, WARN); notes are appended to a passing summary."""
    bad = sorted((f for f in findings if f.status in _RANK), key=lambda f: _RANK.index(f.status))
    notes = [f.summary for f in findings if f.status is Status.PASS]
    if not bad:
        return passed("; ".join([ok, *notes]), evidence, **metrics)
    rem = next((f.remediation for f in bad if f.remediation), None)
    return Outcome(bad[0].status, "; ".join(f.summary for f in bad), evidence, metrics, rem)


def same(a: str | None, b: str | None) -> bool:
    """Two Ascend version strings name the same version (`8.1.RC1` == `8.1.rc1`)."""
    from ascend_audit.facts.huawei_version import same as same_version

    return same_version(a, b)


def file_findings(vf: Any, boards: Any, container: bool) -> list[Outcome]:
    """Missing or unreadable driver / firmware version.info, and where the running one comes from.

    A firmware file that is not there (and, in a container, a driver file: containers rarely mount
    them) is covered by what every NPU's board reports (`npu-smi info -t board`); without either
    the version is unknown: FAIL on a host (no driver file: not installed), WARN in a container.
    """
    out: list[Outcome] = []
    fw_seen, sw_seen = boards.firmware_versions(), boards.software_versions()
    for f, what, seen, field in (
        (vf.driver, "driver", sw_seen, "Software Version"),
        (vf.firmware, "firmware", fw_seen, "Firmware Version"),
    ):
        running = ", ".join(sorted(set(seen.values())))
        if f.missing and running and (container or what == "firmware"):
            out.append(
                note(
                    f"{what} {running} as every NPU's `npu-smi info -t board` reports "
                    f"({field}); {f.path} is not present"
                )
            )
        elif f.missing and container:
            out.append(
                warn(
                    f"{what} version unknown: {f.path} is not mounted in this container "
                    f"and no NPU board reports its {field}"
                )
            )
        elif f.missing:
            fix = "driver not installed" if what == "driver" else "firmware file missing"
            out.append(fail(f"{fix}: {f.path} does not exist"))
        elif not f.present:
            out.append(error(f"cannot read {f.path}: {f.read.error}"))
        elif not f.parsed.version:
            out.append(error(f"{f.path} has no Version= line: {'; '.join(f.parsed.problems[:2])}"))
    readable = [b for b in boards.boards if b.readable]
    if readable and not fw_seen:
        out.append(
            warn(
                f"every NPU reports Firmware Version NA ({len(readable)} boards): the "
                "running firmware is not proven (run npu-smi as root on the host)"
            )
        )
    return out


def compatibility_findings(boards: Any) -> list[Outcome]:
    """Each board's own `Compatibility` verdict on its driver and firmware (DCMI_COMPAT_*)."""
    out: list[Outcome] = []
    states: dict[str, list[int]] = {}
    for b in boards.boards:
        if b.readable:
            value = (b.kv.first("Compatibility") or "").strip().upper()
            if value:
                states.setdefault(value, []).append(b.npu_id)
    for value, ids in states.items():
        npus = ", ".join(map(str, ids))
        if value == "NOK":
            out.append(
                fail(
                    f"NPU {npus}: board reports Compatibility NOK: driver and firmware "
                    "do not match (DCMI_COMPAT_NOK)"
                )
            )
        elif value != "OK" and value not in ("NA", "N/A"):
            out.append(
                warn(
                    f"NPU {npus}: board reports Compatibility {value}: the driver and "
                    "firmware pairing is unknown (a failed or pre-23.0.RC2 firmware install)"
                )
            )
    if set(states) == {"OK"}:
        out.append(note("every NPU's board reports Compatibility OK"))
    return out


def install_findings(vf: Any) -> list[Outcome]:
    """/etc/ascend_install.info: unreadable is reported; an unfinished install fails."""
    read = getattr(vf, "install_read", None)
    if read is None or read.missing:
        return []
    if not read.present:
        return [error(f"cannot read {read.path}: {read.read.error}")]
    status = read.parsed.driver_install_status if read.parsed is not None else None
    if status and status.strip().lower() != "complete":
        return [
            fail(
                f"{read.path} says Driver_Install_Status={status}: the driver package is "
                "not completely installed; reinstall it"
            )
        ]
    return []


def _board_firmware_parity(vf: Any, boards: Any) -> list[Outcome]:
    """No firmware file: the driver's compatible_version_fw against what each NPU runs."""
    from ascend_audit.facts.versions import FirmwareVersionInfo, driver_accepts_firmware

    out: list[Outcome] = []
    for fw in sorted(set(boards.firmware_versions().values())):
        verdict = driver_accepts_firmware(vf.driver.parsed, FirmwareVersionInfo(version=fw))
        if verdict.accepted is False:
            out.append(
                fail(
                    f"driver {vf.driver_version} does not accept the running firmware: "
                    f"{verdict.reason}"
                )
            )
        elif verdict.accepted:
            out.append(note(f"driver {vf.driver_version} accepts running firmware {fw}"))
    return out


def parity_finding(driver: Any, firmware: Any) -> Outcome:
    """Each version.info's compatible range against the other's version."""
    from ascend_audit.facts.versions import driver_firmware_compatibility

    verdict = driver_firmware_compatibility(driver, firmware)
    pair = f"driver {driver.version} / firmware {firmware.version}"
    if verdict.accepted:
        return note(f"{pair} accept each other")
    package = driver.package_version or driver.version
    if same(package, firmware.package_version):
        return note(
            f"{pair} come from the same package {firmware.package_version}, so they are taken as "
            f"matched although the ranges say: {verdict.reason}"
        )
    if verdict.accepted is False:
        return fail(f"{pair} do not accept each other: {verdict.reason}")
    return warn(f"{pair}: compatibility not stated ({verdict.reason})")


def board_findings(boards: Any, vf: Any) -> list[Outcome]:
    """What each NPU's board says it runs, against each other and against the installed files."""
    out: list[Outcome] = []
    for b in boards.boards:
        why = b.problem()
        if why and b.result.status in ("nonzero", "timeout", "signal"):
            out.append(fail(f"{b.label} board query failed: {why}"))
        elif why:
            out.append(error(f"{b.label} board info unreadable: {why}"))
    fw, sw = boards.firmware_versions(), boards.software_versions()
    for values, what, installed, fix in (
        (fw, "firmware", vf.firmware_version, "power-cycle the node to activate it"),
        (sw, "driver (Software Version)", vf.driver_version, "reboot to load it"),
    ):
        groups = _by_value(values)
        if len(groups) > 1:
            listed = "; ".join(
                f"{v} on NPU {', '.join(map(str, ids))}" for v, ids in groups.items()
            )
            out.append(fail(f"NPUs run different {what}: {listed}"))
        elif groups and installed and not same(next(iter(groups)), installed):
            out.append(
                fail(
                    f"NPUs run {what} {next(iter(groups))} but {installed} is installed: {fix}",
                )
            )
    return out


def _by_value(values: dict[int, str]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for npu, v in values.items():
        groups.setdefault(v, []).append(npu)
    return groups


def policy_findings(ctx: Context, vf: Any) -> list[Outcome]:
    """Installed versions against the policy's expected driver and firmware versions."""
    out: list[Outcome] = []
    for key, what, actual in (
        ("driver.expected_driver_version", "driver", vf.driver_version),
        ("driver.expected_firmware_version", "firmware", vf.firmware_version),
    ):
        want = ctx.policy[key]
        if want and actual and not same(want, actual):
            out.append(fail(f"{what} {actual} installed, policy expects {want}"))
    return out


@check("DRV-VER-001")
def driver_firmware(ctx: Context) -> Outcome:
    vf = ctx.fact(VERSION_FILES)
    boards = ctx.fact(NPU_BOARDS)
    evidence = [vf.driver.evidence(), vf.firmware.evidence()]
    evidence += [b.evidence() for b in boards.boards]
    container = bool(ctx.fact(CONTAINER).in_container)
    findings = file_findings(vf, boards, container)
    if vf.driver_version and vf.firmware_version:
        findings.append(parity_finding(vf.driver.parsed, vf.firmware.parsed))
    elif vf.driver_version:
        findings += _board_firmware_parity(vf, boards)
    findings += compatibility_findings(boards) + install_findings(vf)
    findings += board_findings(boards, vf) + policy_findings(ctx, vf)
    if boards.reason:
        findings.append(note(f"per-NPU versions not read: {boards.reason}"))
    fw = sorted(set(boards.firmware_versions().values()))
    sw = sorted(set(boards.software_versions().values()))
    ok = f"driver {vf.driver_version or '/'.join(sw) or '?'} and firmware "
    ok += f"{vf.firmware_version or '/'.join(fw) or '?'}"
    if fw:
        ok += f"; every NPU runs firmware {', '.join(fw)}"
    return fold(findings, ok, evidence, driver=vf.driver_version, firmware=vf.firmware_version)


def hdk_finding(cann: str, hdk: str, family_ok: bool) -> Outcome | None:
    """CANN against the driver (HDK) in the packaged compatibility table; None if no table.

    A pair the table does not list is not a warning when the toolkit's own compatible_version
    already accepts the driver's inner-version family (FAMILY_OK)."""
    try:
        from ascend_audit.facts.compat import check_cann_hdk
    except ImportError:
        return None
    answer = check_cann_hdk(cann, hdk)
    where = f"table of version {answer.table_version}"
    row = answer.rows[0] if answer.rows else None
    source = f" (source: {answer.sources[0]})" if answer.sources else ""
    scope = f", a {row.get('scope')} row" if row is not None and row.get("scope") else ""
    if answer.verdict == "bad":
        return fail(f"CANN {cann} with driver {hdk}: {answer.reason} in the {where}{scope}{source}")
    if answer.verdict == "ok":
        said = f" (a row the project added from {row.source})" if row and _project(row) else ""
        return note(f"CANN {cann} with driver {hdk} {answer.reason} in the {where}{said}")
    if family_ok:
        return note(f"CANN {cann} with driver {hdk} is not in the {where}; the toolkit accepts it")
    return warn(f"CANN {cann} with driver {hdk} is not in the {where}; check the release notes")


def _project(row: Any) -> bool:
    """A row of data/compat_project.toml (cited release notes), not of the reference tables."""
    return row is not None and row.get("origin") == "project"


def running_driver(vf: Any, boards: Any, run: Any) -> tuple[str | None, str]:
    """The driver version and where it was read: version.info, else npu-smi (board, header)."""
    if vf.driver_version:
        return vf.driver_version, vf.driver.path
    sw = sorted(set(boards.software_versions().values()))
    if len(sw) == 1:
        return sw[0], "npu-smi info -t board (Software Version)"
    info = run.info if run is not None else None
    if info is not None and info.driver_version:
        return info.driver_version, "the npu-smi info header"
    return None, ""


def toolkit_findings(tk: Any, vf: Any, driver: str | None, origin: str) -> list[Outcome]:
    """The toolkit's compatible driver families and the HDK table, against the running driver."""
    from ascend_audit.facts.huawei_version import is_prerelease
    from ascend_audit.facts.versions import toolkit_accepts_driver

    out: list[Outcome | None] = []
    version = tk.parsed.version
    if is_prerelease(version):
        out.append(
            warn(
                f"CANN {version} is a pre-release (alpha, beta or test build): not a "
                "release to go live on"
            )
        )
    family_ok = False
    if vf.driver.present and vf.driver.parsed is not None:
        verdict = toolkit_accepts_driver(tk.parsed, vf.driver.parsed)
        family_ok = verdict.accepted is True
        if verdict.accepted is False:
            out.append(fail(f"CANN {version} does not support this driver: {verdict.reason}"))
        elif verdict.accepted is None:
            out.append(warn(f"CANN {version} vs driver not stated: {verdict.reason}"))
        else:
            out.append(note(verdict.reason))
    elif driver is None:
        return [
            *(f for f in out if f is not None),
            error(
                f"cannot judge CANN against the driver: {vf.driver.path} not "
                "readable and npu-smi names no driver version"
            ),
        ]
    else:
        out.append(
            note(
                f"driver {driver} from {origin} ({vf.driver.path} not present: its "
                "inner-version family is unknown)"
            )
        )
    if driver:
        out.append(hdk_finding(version, driver, family_ok))
    return [f for f in out if f is not None]


@check("DRV-VER-002")
def cann_driver(ctx: Context) -> Outcome:
    vf = ctx.fact(VERSION_FILES)
    tk = vf.toolkit
    want = ctx.policy["driver.expected_cann_version"]
    if tk is None:
        searched = ", ".join(vf.searched)
        return warn(
            "no CANN toolkit installed on the host; the serving image may carry its own CANN "
            f"(searched {searched})" + (f"; policy expects CANN {want}" if want else ""),
            [Evidence("file", p, "not found") for p in vf.searched],
        )
    evidence = [tk.evidence(), vf.driver.evidence()]
    driver, origin = running_driver(vf, ctx.fact(NPU_BOARDS), ctx.fact(NPU_SMI))
    findings = toolkit_findings(tk, vf, driver, origin)
    if want and not same(want, tk.parsed.version):
        findings.append(fail(f"CANN {tk.parsed.version} installed, policy expects {want}"))
    ok = f"CANN {tk.parsed.version} ({tk.path}) supports driver {driver}"
    return fold(findings, ok, evidence, cann=tk.parsed.version, driver=driver)
