"""The DCMI return-code catalog and npu-smi's own messages (warnings, `ret is -80NN`)."""

from __future__ import annotations

import pytest
from shared_fixtures import read_fixture

from ascend_audit.facts.dcmi_codes import catalog, lookup
from ascend_audit.facts.npu_smi.messages import parse_messages

DCMI_8005 = (
    "field/npu_smi/npu-smi_dcmi_init_failed_-8005_container_single_davinci7_"
    "vllm-ascend-v0.10.0rc1_vllm-ascend-2698.txt"
)
PARTIAL = (
    "[WARNING]The driver package may not be completely installed, which may cause function "
    "abnormal. Please reinstall it."
)


def test_catalog_entries_are_complete():
    assert len(catalog()) >= 15
    for code, entry in catalog().items():
        assert -8999 <= code <= -8000
        assert entry.name.startswith("DCMI_ERR_CODE_")
        assert entry.meaning and entry.remediation and entry.sources


@pytest.mark.parametrize("code", sorted(catalog()))
def test_each_code_is_read_from_an_npu_smi_failure_and_found(code):
    msgs = parse_messages(
        f"DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\n"
        f"dcmi module initialize failed. ret is {code}\n"
    )
    assert msgs.return_codes == (code,)
    entry = lookup(msgs.return_codes[0])
    assert entry is not None and entry.code == code
    assert str(code) in entry.describe()


def test_real_8005_container_failure():
    msgs = parse_messages(read_fixture(DCMI_8005))
    assert msgs.return_codes == (-8005,)
    assert msgs.errors[-1] == "dcmi module initialize failed. ret is -8005"
    assert "another container" in lookup(-8005).meaning


def test_8020_wording_of_the_cann_container_image_issue():
    text = "dcmi model initialized failed, because the device is used. ret is -8020\n"
    assert parse_messages(text).return_codes == (-8020,)
    assert lookup(-8020).name == "DCMI_ERR_CODE_RESOURCE_OCCUPIED"


@pytest.mark.parametrize(
    ("line", "code"),
    [
        # the HAMi ascend-device-plugin log's wording (issue #66): camel-case retCode
        ("get vDev activity failed, err: retCode: -8255", -8255),
        ("dcmi_get_device_info failed, ret = -8007", -8007),
        ("query failed, return code -8020", -8020),
        ("dcmi init failed, error code is -8005", -8005),
        ("dcmi init failed, errorcode=-8001", -8001),
        ("DrvMngGetConsoleLogLevel failed. (ret=4)", None),  # not a DCMI code
    ],
)
def test_return_code_wordings(line, code):
    assert parse_messages(line + "\n").return_codes == ((code,) if code else ())


def test_partial_install_warning_above_the_table():
    msgs = parse_messages(PARTIAL + "\n+----+\n| npu-smi 24.1.rc3  Version: 24.1.rc3 |\n")
    assert msgs.partial_install == PARTIAL
    assert not msgs.errors


def test_unknown_code_and_key_value_lines():
    msgs = parse_messages("Error Code                     : NA\nret is -8999\n")
    assert msgs.return_codes == (-8999,) and lookup(-8999) is None
    assert msgs.errors == ("ret is -8999",)


@pytest.mark.parametrize(
    "text", ["", "\x00\xff garbage", "ret is -8005" * 10000, "|" * 5000, "\n" * 10000]
)
def test_hostile_input_never_raises(text):
    msgs = parse_messages(text)
    assert len(msgs.errors) <= 20 and len(msgs.warnings) <= 20
