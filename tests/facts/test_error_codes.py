"""The Ascend error-code catalog: every entry's test line is found, families, hostile input."""

from __future__ import annotations

import pytest

from ascend_audit.facts.error_codes import catalog, describe, find_codes

ENTRIES = sorted(catalog().codes.values(), key=lambda i: (i.kind, i.code))
FAMILIES = [info for _kind, _prefix, info in catalog().families]


@pytest.mark.parametrize("info", ENTRIES, ids=lambda i: f"{i.kind}:{i.code}")
def test_each_entry_is_found_from_its_test_line(info) -> None:
    found = [(code, kind) for code, kind, _s, _e in find_codes(info.example)]
    assert (info.code, info.kind) in found, (info.example, found)
    got = describe(info.code, info.kind)
    assert got is info and not got.family
    assert info.layer in ("driver", "operator", "framework")
    assert info.meaning and info.remediation and info.source and info.causes


@pytest.mark.parametrize("info", FAMILIES, ids=lambda i: f"{i.kind}:{i.code}*")
def test_each_family_describes_an_unlisted_code_from_its_test_line(info) -> None:
    found = [(c, k) for c, k, _s, _e in find_codes(info.example) if k == info.kind]
    assert found, info.example
    code = next(c for c, _k in found if c.startswith(info.code))
    got = describe(code, info.kind)
    assert got is not None and got.family and got.code == code
    assert got.layer == info.layer


def test_layers_of_the_field_codes() -> None:
    layer = {
        c: describe(c, k).layer
        for c, k in [
            ("507015", "acl"),
            ("EZ9903", "cann"),
            ("507033", "acl"),
            ("EJ0003", "cann"),
            ("11", "hccl"),
            ("ERR02200", "torch_npu"),
            ("EL0004", "cann"),
            ("107030", "acl"),
        ]
    }
    assert layer == {
        "507015": "operator",
        "EZ9903": "operator",
        "507033": "driver",
        "EJ0003": "driver",
        "11": "driver",
        "ERR02200": "driver",
        "EL0004": "framework",
        "107030": "framework",
    }


def test_hccl_codes_only_after_an_hccl_call() -> None:
    line = (
        "RuntimeError: createHCCLComm: HCCL function error: HcclGetRootInfo(&id), error code is 11"
    )
    assert ("11", "hccl") in [(c, k) for c, k, _s, _e in find_codes(line)]
    # A small number elsewhere is not an ACL code (ACL codes have six digits).
    assert find_codes("worker exited, error code is 11") == []


@pytest.mark.parametrize(
    "line",
    [
        "[E606 09:43:53.808424467 OpParamMaker.cpp:454] operator()",  # glog prefix, not a code
        "dcmi module initialize failed. ret is -8005",  # DCMI: the driver layer's catalog
        "EXAMPLE text with E-words EAGER ENV and a path /opt/E12345/x",
        "",
        "\x00\xff" * 100,
        "ERR" * 10000,
    ],
)
def test_not_codes(line: str) -> None:
    assert find_codes(line) == []


def test_hostile_input_never_raises() -> None:
    assert find_codes(None) == []  # type: ignore[arg-type]
    long = "error code is 507015 " * 5000
    assert len(find_codes(long)) == 5000
    assert describe("ZZ0000", "cann") is None
    assert describe("123456", "nope") is None
