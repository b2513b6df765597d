"""Tests for the hccn_tool output parsers, loop splitting and /etc/hccn.conf."""

from __future__ import annotations

import json
import random
from datetime import datetime

import pytest
from shared_fixtures import DATA, fixture_files, read_fixture

from ascend_audit.facts import hccn
from ascend_audit.facts.hccn import (
    parse_fec,
    parse_gateway,
    parse_hccl_tools_log,
    parse_hccn_conf,
    parse_ip,
    parse_link,
    parse_link_stat,
    parse_lldp,
    parse_net_health,
    parse_netdetect,
    parse_optical,
    parse_ping,
    parse_stat,
    parse_tls,
    split_loop_output,
)

H = "hccn/"
ALL_PARSERS = (
    parse_link,
    parse_net_health,
    parse_ip,
    parse_gateway,
    parse_netdetect,
    parse_optical,
    parse_link_stat,
    parse_lldp,
    parse_tls,
    parse_stat,
    parse_fec,
    parse_ping,
    parse_hccn_conf,
    parse_hccl_tools_log,
)


def _data(name: str) -> str:
    return (DATA / "hccn" / name).read_text(encoding="utf-8")


def _devs(facts) -> list:
    return [d.device for d in facts.devices]


# --------------------------------------------------------------------------------------------
# -link -g


def test_link_loop_up_elided_attributes_first_and_last():
    f = parse_link(
        read_fixture(H + "link_-g_loop_UP_8npu_910B3_deepseekv3-multinode-doc.partial.txt")
    )
    assert [(d.device, d.status) for d in f.devices] == [(0, "UP"), (7, "UP")]
    assert f.down == ()
    assert f.problems == ("devices elided with '...': 6 of 8",)


def test_link_loop_down_single_line_of_eight():
    f = parse_link(
        read_fixture(
            H + "link_-g_loop_DOWN_single-node_no_RoCE_cabling_vllm-ascend-14506.partial.txt"
        )
    )
    assert [(d.device, d.status, d.up) for d in f.devices] == [(0, "DOWN", False)]
    assert len(f.down) == 1
    assert "devices 1, 2, 3, 4, 5, 6, 7 have no output" in f.problems[0]


def test_link_explicit_headers_errors_and_vnic():
    f = parse_link(_data("loop_explicit_headers_mixed.txt"))
    got = [(d.device, d.status, d.vnic, d.error) for d in f.devices]
    assert got == [
        (0, "UP", False, None),
        (1, "DOWN", False, None),
        (2, None, False, "Control link unreachable."),
        (3, "UP", True, None),
    ]
    assert f.problems == ("device 2: no `link status:` line",)


def test_link_single_capture_has_unknown_device():
    f = parse_link("link status: UP\n")
    assert [(d.device, d.status) for d in f.devices] == [(None, "UP")]
    assert f.problems == ()


# --------------------------------------------------------------------------------------------
# -net_health -g


def test_net_health_loop_success_elided():
    f = parse_net_health(
        read_fixture(
            H + "net_health_-g_loop_Success_8npu_910B3_deepseekv3-multinode-doc.partial.txt"
        )
    )
    assert [(d.device, d.state, d.code, d.level) for d in f.devices] == [
        (0, "Success", 0, "ok"),
        (7, "Success", 0, "ok"),
    ]
    assert f.not_success == ()


def test_net_health_socket_failed_spelling_maps_to_code_1():
    f = parse_net_health(
        read_fixture(H + "net_health_-g_SocketFailed_910A_fixture_mind-cluster-faultdiag.txt")
    )
    (d,) = f.devices
    assert (d.device, d.state, d.raw, d.code, d.level) == (
        0,
        "Socket fail",
        "Socket failed",
        1,
        "fail",
    )
    assert f.problems == ()


def test_net_health_fault_then_success_with_placeholder_device():
    name = (
        "net_health_-g_Fault_after_link-s-down_then_Success_after_cfg_recovery"
        "_mind-cluster-doc.partial.txt"
    )
    f = parse_net_health(read_fixture(H + name))
    assert [(d.device, d.state, d.level) for d in f.devices] == [
        (None, "Fault", "fail"),
        (None, "Success", "ok"),
    ]
    assert f.problems == ()


@pytest.mark.parametrize(
    ("state", "code", "level"),
    [("Init", 6, "warn"), ("Receive timeout", 2, "fail"), ("Detect ip set", 8, "fail")],
)
def test_net_health_levels(state, code, level):
    (d,) = parse_net_health(f"net health status: {state}\n").devices
    assert (d.code, d.level) == (code, level)


def test_net_health_unknown_state_is_a_problem():
    f = parse_net_health("net health status: Banana\n")
    assert f.devices[0].level == "fail" and f.devices[0].code is None
    assert "unknown net health state" in f.problems[0]


# --------------------------------------------------------------------------------------------
# -ip -g


def test_ip_explicit_blocks_with_empty_device_2():
    f = parse_ip(read_fixture(H + "ip_-g_3npu_dev2_noIP_910A_fixture_mind-cluster-faultdiag.txt"))
    assert [(d.device, d.ipaddr, d.netmask) for d in f.devices] == [
        (0, "192.0.2.10", "255.255.255.0"),
        (1, "192.0.2.11", "255.255.255.0"),
        (2, None, None),
    ]
    assert [d.device for d in f.without_ip] == [2]
    assert f.devices[2].error.startswith("no ipaddr printed")
    assert f.problems == ()


def test_ip_private_8npu():
    f = parse_ip(read_fixture(H + "ip_-g_8npu_privateIPs_fixture_mind-cluster-faultdiag.txt"))
    assert {d: x.ipaddr for d, x in f.by_device().items()} == {
        i: f"10.10.0.{10 + i}" for i in range(8)
    }
    assert all(d.addresses[0].prefix_len == 24 for d in f.devices)


def test_ip_loop_without_device_numbers_counts_blocks():
    f = parse_ip(read_fixture(H + "ip_-g_loop_8npu_910B3_deepseekv3-multinode-doc.txt"))
    assert [(d.device, d.ipaddr) for d in f.devices] == [(i, f"192.0.2.{80 + i}") for i in range(8)]
    assert f.problems == ()


def test_ip_followed_by_route_table_ignores_route():
    f = parse_ip(read_fixture(H + "ip_-g_and_route_-g_910B1_huawei-cloud_arthurchiao.txt"))
    (d,) = f.devices
    assert (d.device, d.ipaddr, d.netmask, d.addresses[0].prefix_len) == (
        3,
        "192.0.2.213",
        "255.255.0.0",
        16,
    )


def test_ip_error_line_and_ipv6_and_two_ports():
    f = parse_ip("Get ipconf failed, because no ip was preset there!\n")
    assert f.devices[0].addresses == () and "Get ipconf failed" in f.devices[0].error
    f6 = parse_ip("ipv6_address:fe80::1\nprefix_length:64\n")
    assert f6.devices[0].addresses[0] == hccn.IpAddress("fe80::1", None, 64, "ipv6")
    two = parse_ip(
        "hccn_tool -i 0 -ip -g\nipaddr:10.0.0.1\nnetmask:255.255.255.0\n"
        "ipaddr:10.0.1.1\nnetmask:255.255.0.0\n"
    )
    assert [a.address for a in two.devices[0].addresses] == ["10.0.0.1", "10.0.1.1"]


def test_ip_bad_mask_and_address_are_problems():
    f = parse_ip("ipaddr:300.1.1.1\nnetmask:255.0.255.0\n")
    assert len(f.problems) == 2 and f.devices[0].addresses[0].prefix_len is None


def test_ip_matches_rank_table_server_from_same_doc():
    from ascend_audit.facts.rank_table import devices_of_server, parse_rank_table

    ips = parse_ip(read_fixture(H + "ip_-g_loop_8npu_910B3_deepseekv3-multinode-doc.txt"))
    table = parse_rank_table(
        read_fixture(
            H + "rank_table_v1.0_4server_32rank_commented_deepseekv3-multinode-doc.partial.jsonc"
        )
    )
    devs = devices_of_server(table, "172.30.210.94")
    assert {int(d.device_id): d.device_ip for d in devs} == {
        k: v.ipaddr for k, v in ips.by_device().items()
    }


# --------------------------------------------------------------------------------------------
# -gateway -g / -netdetect -g


def test_gateway_loop():
    f = parse_gateway(read_fixture(H + "gateway_-g_loop_8npu_910B3_deepseekv3-multinode-doc.txt"))
    assert [(d.device, d.gateway, d.iface) for d in f.devices] == [
        (i, "192.0.2.1", f"eth{i}") for i in range(8)
    ]
    assert f.problems == ()


def test_gateway_unset():
    f = parse_gateway("Get gateway failed, because no gateway was preset there!\n")
    assert f.devices[0].gateway is None and "Get gateway failed" in f.devices[0].error


def test_netdetect_pasted_address_label_and_source_addr_label():
    f = parse_netdetect(
        read_fixture(H + "netdetect_-g_loop_8npu_910B3_deepseekv3-multinode-doc.partial.txt")
    )
    assert [(d.device, d.address) for d in f.devices] == [(0, "192.0.2.1"), (7, "192.0.2.1")]
    assert parse_netdetect("netdetect addr: 10.0.0.1\n").devices[0].address == "10.0.0.1"


# --------------------------------------------------------------------------------------------
# -optical -g


def test_optical_faultdiag_fixture_alarms():
    f = parse_optical(
        read_fixture(
            H + "optical_-g_910A_notpresent_RxLos_RxLoL_lowRx_fixture_mind-cluster-faultdiag.txt"
        )
    )
    (m,) = f.devices
    assert m.device == 0 and m.present is False
    assert m.tx_power_mw == (4.4035, 1.3968, 1.414, 1.4988)
    assert m.rx_power_mw == (1.0189, 0.0054, 0.9907, 1.0213)
    assert m.rx_power_thresholds == (0.1445, 3.5481)
    assert m.tx_power_thresholds == (0.2818, 3.5481)
    assert (m.tx_los, m.rx_los, m.tx_lol, m.rx_lol) == (0, 0xFF, 0, 0xFF)
    assert m.temperature_c == 47.0 and m.vendor == "Hisense" and m.part_number == "LMQ8611-PC+"
    assert m.field("media snr lane0") == "23.1211 dB"
    assert m.alarms == (
        "optical module not present",
        "Tx Power0 4.4035 mW above high threshold 3.5481 mW",
        "Rx Power1 0.0054 mW below low threshold 0.1445 mW",
        "Rx LOS flag 0xff (loss of signal)",
        "Rx LoL flag 0xff (loss of lock)",
    )
    assert f.problems == ()


def test_optical_healthy_two_lane_with_na():
    (m,) = parse_optical(_data("optical_4lane_healthy.txt")).devices
    assert m.present is True and m.alarms == ()
    assert m.tx_power_mw == (1.4035, 1.3968, None, None)
    assert m.tx_lol is None


# --------------------------------------------------------------------------------------------
# combined doc example: one file, eight subcommands for device 0

COMBINED = (
    "npu_info_before_doc-example_device0_net_health_link_optical_tls_fec_ip_stat_link_stat"
    "_mind-cluster-doc.partial.txt"
)


def test_combined_doc_example_each_parser_takes_its_own_block():
    text = read_fixture(H + COMBINED)
    split = split_loop_output(text)
    assert [(c.device, c.sub) for c in split.chunks] == [
        (0, "net_health"),
        (0, "link"),
        (0, "optical"),
        (0, "tls"),
        (0, "fec"),
        (0, "ip"),
        (0, "stat"),
        (0, "link_stat"),
    ]
    assert parse_net_health(text).devices[0].state == "Init"
    assert parse_net_health(text).devices[0].level == "warn"
    assert parse_link(text).devices[0].status == "UP"
    opt = parse_optical(text).devices[0]
    assert opt.tx_power_mw == (4.4035,) and opt.rx_los == 0xFF
    assert "Tx Power 4.4035 mW above high threshold 3.5481 mW" in opt.alarms
    assert parse_tls(text).devices[0].switch == 0
    assert parse_fec(text).devices[0].mode == "rs"
    ip = parse_ip(text)
    assert ip.devices[0].ipaddr == "10.xx.xx.10" and "not a valid IPv4" in ip.problems[0]
    st = parse_stat(text).devices[0]
    assert (
        st.counter("nic_rx_all_oct_num") == 482237805 and st.counter("roce_qp_status_err_num") == 0
    )
    ls = parse_link_stat(text).devices[0]
    assert (ls.device, ls.link_up_count, ls.last_state) == (0, 2, "UP")
    assert parse_gateway(text).devices == () and parse_lldp(text).devices == ()


# --------------------------------------------------------------------------------------------
# -link_stat -g


def test_link_stat_trailing_down_on_devices_0_and_3():
    f = parse_link_stat(
        read_fixture(H + "link_stat_-g_8npu_flaps_trailing_DOWN_fixture_mind-cluster-faultdiag.txt")
    )
    assert _devs(f) == list(range(8))
    assert [d.device for d in f.ending_down] == [0, 3]
    d0 = f.devices[0]
    assert d0.link_up_count == 2 and d0.link_down_count is None
    assert d0.now == datetime(2022, 8, 2, 3, 36, 43)
    assert [r.state for r in d0.records] == ["DOWN", "UP", "DOWN", "UP"]
    assert d0.records[0].when == datetime(2022, 8, 1, 14, 44, 40)
    assert d0.down_records == 2 and d0.downs_within(86400) == 2 and d0.downs_within(3600) == 0
    assert all(d.last_state == "UP" for d in f.devices if d.device not in (0, 3))
    assert f.problems == ()


def test_link_stat_with_link_down_count():
    f = parse_link_stat(
        read_fixture(H + "link_stat_-g_with_link_down_count_flap_Oct2025_hccl-doc.txt")
    )
    (d,) = f.devices
    assert (d.device, d.link_up_count, d.link_down_count, d.last_state) == (0, 2, 1, "UP")
    assert [(r.time, r.state) for r in d.records] == [
        ("Sun Oct 5 10:13:51 2025", "UP"),
        ("Sun Oct 5 10:13:50 2025", "DOWN"),
        ("Sun Oct 5 10:13:35 2025", "UP"),
    ]
    assert d.downs_within(30 * 86400) == 1 and d.downs_within(86400) == 0


def test_link_stat_old_device_prefix_and_na_records():
    text = (
        "[device 4]current time        : Wed Jun  7 10:08:28 2023\n"
        "[device 4]link change records : NA\n"
    )
    (d,) = parse_link_stat(text).devices
    assert d.device == 4 and d.records == () and d.last_state is None


# --------------------------------------------------------------------------------------------
# -lldp -g


def test_lldp_full_block():
    f = parse_lldp(read_fixture(H + "lldp_-g_full_910B1_huawei-cloud_arthurchiao.partial.txt"))
    (n,) = f.devices
    assert n.device == 3
    assert n.port_ifname == "400GE1/1/20:2" and n.port_id == "Ifname: 400GE1/1/20:2"
    assert n.kind == "route"
    assert n.system_description.splitlines()[-1] == "Huarong DX511"
    assert n.capabilities == "Enabled capabilities: Bridge, Router"
    assert n.management_address == "26.xx.xx.xx" and n.max_frame_size == 9216
    assert [t for t, _ in n.tlvs][-1] == "End of LLDPDU TLV"


def test_lldp_grep_ifname_loop():
    f = parse_lldp(
        read_fixture(H + "lldp_-g_grep_Ifname_loop_8npu_910B3_deepseekv3-multinode-doc.txt")
    )
    assert [(d.device, d.port_ifname) for d in f.devices] == [
        (0, "400GE1/1/5:1"),
        (1, "400GE1/1/5:2"),
        (2, "400GE1/2/5:1"),
        (3, "400GE1/2/5:2"),
        (4, "400GE1/3/5:1"),
        (5, "400GE1/3/5:2"),
        (6, "400GE1/4/5:1"),
        (7, "400GE1/4/5:2"),
    ]
    assert f.problems == ()


def test_lldp_fiber_kind():
    text = "Chassis ID TLV\n\tMAC: aa\nSystem Description TLV\n\tAscendNPU\n"
    assert parse_lldp(text).devices[0].kind == "fiber"


# --------------------------------------------------------------------------------------------
# -tls -g


def test_tls_grep_switch_all_disabled():
    f = parse_tls(
        read_fixture(H + "tls_-g_grep_switch_loop_8npu_910B3_deepseekv3-multinode-doc.txt")
    )
    assert [(d.device, d.switch, d.preconfigured, d.alarm_days) for d in f.devices] == [
        (i, 0, 1, 60) for i in range(8)
    ]
    assert f.consistent and f.switches == (0,)


def test_tls_mismatch():
    f = parse_tls(read_fixture(H + "tls_-g_grep_switch_mismatch_dev1_enabled_hccl-doc.txt"))
    assert [(d.device, d.enabled) for d in f.devices] == [(0, False), (1, True)]
    assert not f.consistent and f.switches == (0, 1)


def test_tls_full_cert_blocks_old_layout():
    f = parse_tls(read_fixture(H + "tls_-g_full_cert_info_loop_hccl-doc.partial.txt"))
    assert _devs(f) == [0, 1]
    d0 = f.devices[0]
    assert d0.switch == 0 and d0.preconfigured is None and d0.alarm_days == 60
    assert [c.name for c in d0.certs] == ["pub cert", "ca1 cert", "ca2 cert"]
    assert d0.certs[0].issuer == "/C=CN/ST=GD/O=HUAWEI/OU=2012/CN=2_1thCA"
    assert d0.certs[2].end_time == "Sat Feb 16 03:19:10 2030 GMT"
    assert f.problems == (
        "loop over 8 devices: devices 2, 3, 4, 5, 6, 7 missing (elided or no output)",
    )


# --------------------------------------------------------------------------------------------
# -stat -g / -fec -g / -ping -g


def test_stat_roce_error_counters():
    f = parse_stat(read_fixture(H + "stat_-g_8npu_roce_err_pkt_fixture_mind-cluster-faultdiag.txt"))
    assert [(d.device, d.roce_rx_err, d.roce_tx_err) for d in f.devices] == [
        (0, 0, 0),
        (1, 0, 0),
        (2, 0, 0),
        (3, 0, 0),
        (4, 0, 0),
        (5, 11, 12),
        (6, 13, 77),
        (7, 0, 0),
    ]
    assert [d.device for d in f.devices if d.error_counters] == [5, 6]
    assert f.problems == ()


def test_fec_no_fec_mode():
    f = parse_fec(read_fixture(H + "fec_-g_noFECmode_910A_fixture_mind-cluster-faultdiag.txt"))
    assert [(d.device, d.mode, d.raw) for d in f.devices] == [(0, "no", "no FEC mode")]


def test_ping_single_and_loop():
    one = parse_ping(read_fixture(H + "ping_-g_910B1_huawei-cloud_arthurchiao.txt"))
    (p,) = one.devices
    assert (p.device, p.target, p.transmitted, p.received, p.loss_pct, p.ok) == (
        3,
        "192.0.2.205",
        3,
        3,
        0.0,
        True,
    )
    assert p.rtts_ms == (1.418, 0.034, 0.04)
    loop = parse_ping(read_fixture(H + "ping_-g_loop_8npu_910B3_deepseekv3-multinode-doc.txt"))
    assert [(d.device, d.target, d.ok) for d in loop.devices] == [
        (i, "192.0.2.80", True) for i in range(8)
    ]


def test_ping_failure_and_a3_hccs_summary():
    text = (
        "device 1 PING 10.0.0.9\nrecv time out seq=0\n"
        "3 packets transmitted, 0 received, 100.00% packets loss\n"
    )
    (p,) = parse_ping(text).devices
    assert (p.received, p.loss_pct, p.ok) == (0, 100.0, False) and p.failures


# --------------------------------------------------------------------------------------------
# /etc/hccn.conf and the hccl_tools.py log


def test_hccn_conf_partial_with_elision():
    c = parse_hccn_conf(
        read_fixture(H + "hccn_conf_8npu_910B1_huawei-cloud_arthurchiao.partial.txt")
    )
    assert [d.device for d in c.devices] == [0, 7]
    d0 = c.device(0)
    assert (d0.address, d0.netmask, d0.netdetect, d0.gateway, d0.send_arp_status) == (
        "192.0.2.205",
        "255.255.0.0",
        "192.0.2.1",
        "192.0.2.1",
        "1",
    )
    assert c.device(7).address == "192.0.2.143" and c.device(3) is None
    assert c.elided and c.problems == ()


def test_hccn_conf_unsorted_with_xsfp_keys():
    c = parse_hccn_conf(read_fixture(H + "hccn_conf_8npu_910B3_xsfp_reset_vllm-ascend-2498.txt"))
    assert c.addresses() == {i: f"192.0.2.{100 + i}" for i in range(8)}
    assert all(
        d.netmask == "255.255.255.0" and d.gateway is None and d.netdetect is None
        for d in c.devices
    )
    assert c.device(5).get("xsfp_reset_wait_times") == "7"
    assert c.device(5).get("address") == "192.0.2.105"
    assert not c.elided and c.problems == ()


def test_hccn_conf_duplicates_tls_and_junk():
    c = parse_hccn_conf("address_0=10.0.0.1\naddress_0=10.0.0.2\ntls_enable_0=1\nfoo\nglobal=1\n")
    d0 = c.device(0)
    assert d0.address == "10.0.0.2" and d0.tls_enable == "1"
    assert c.global_keys == (("global", "1"),)
    assert any("set twice" in p for p in c.problems)
    assert any("not a key=value" in p for p in c.problems)
    assert any("without netmask" in p for p in c.problems)


def test_hccn_conf_matches_pd_rank_table():
    from ascend_audit.facts.rank_table import parse_rank_table

    c = parse_hccn_conf(read_fixture(H + "hccn_conf_8npu_910B3_xsfp_reset_vllm-ascend-2498.txt"))
    t = parse_rank_table(
        read_fixture(
            H
            + "rank_table_v1.2_vllm-ascend_pd_prefill_decode_device_list_1P1D_vllm-ascend-2498.json"
        )
    )
    for d in t.devices:
        assert c.device(int(d.device_id)).address == d.device_ip


def test_hccl_tools_log_a3_ips_and_sdids():
    name = (
        "a3_ranktable_gen_log_hccn_ip_and_spod_SDID_16npu_pymotor-vllm_fixture"
        "_mind-cluster.partial.txt"
    )
    log = parse_hccl_tools_log(read_fixture(H + name))
    assert log.hardware_type == "HardwareType.A3" and len(log.visible_devices) == 16
    assert [(d.device, d.ipaddr, d.super_device_id) for d in log.devices] == [
        (0, "10.0.245.11", 167772160),
        (1, "10.0.244.11", 167837697),
        (10, "10.0.245.16", 169082890),
        (11, "10.0.244.16", 169148427),
    ]
    assert {(d.super_pod_id, d.super_pod_size, d.server_index) for d in log.devices} == {
        (0, 384, 40)
    }
    assert "12, 13, 14, 15, 2" in log.problems[0]


# --------------------------------------------------------------------------------------------
# split_loop_output


def test_split_seq_loop_and_brace_loop_ranges():
    s = split_loop_output(
        "for i in `seq 0 3`; do hccn_tool -i $i -fec -g; done\n"
        "fec mode: rs FEC mode\n" * 1 + "fec mode: rs FEC mode\n" * 3
    )
    assert s.loop_devices == (0, 1, 2, 3) and [c.device for c in s.chunks] == [0, 1, 2, 3]
    s2 = split_loop_output(
        "for i in {0..15}; do hccn_tool -i $i -link -g; done\n" + "link status: UP\n" * 16
    )
    assert [c.device for c in s2.chunks] == list(range(16)) and s2.problems == ()
    s3 = split_loop_output(
        "for i in 0 2 4; do hccn_tool -i $i -link -g; done\n" + "link status: UP\n" * 3
    )
    assert [c.device for c in s3.chunks] == [0, 2, 4]


def test_split_more_records_than_loop_devices():
    s = split_loop_output(
        "for i in {0..1}; do hccn_tool -i $i -link -g; done\n" + "link status: UP\n" * 3
    )
    assert [c.device for c in s.chunks] == [0, 1, None]
    assert "printed 3 records" in s.problems[0]


def test_split_to_dict_is_json():
    s = split_loop_output(read_fixture(H + COMBINED))
    json.dumps(s.to_dict())


def test_every_fixture_parses_with_every_parser_and_serialises():
    files = fixture_files("hccn")
    if not files:
        pytest.skip("../shared/fixtures/hccn is not beside this checkout")
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        for fn in ALL_PARSERS:
            facts = fn(text)
            json.dumps(facts.to_dict())
        split = split_loop_output(text)
        assert isinstance(split.problems, tuple)


# --------------------------------------------------------------------------------------------
# hostile input

HOSTILE_SOURCES = [
    "link_stat_-g_8npu_flaps_trailing_DOWN_fixture_mind-cluster-faultdiag.txt",
    "optical_-g_910A_notpresent_RxLos_RxLoL_lowRx_fixture_mind-cluster-faultdiag.txt",
    "tls_-g_full_cert_info_loop_hccl-doc.partial.txt",
    COMBINED,
]


@pytest.mark.parametrize("fn", ALL_PARSERS, ids=lambda f: f.__name__)
def test_empty_and_non_text_input(fn):
    for bad in ("", "\n\n", None, 42, b"", "\x00\x00"):
        facts = fn(bad)
        assert isinstance(facts.problems, tuple)
        json.dumps(facts.to_dict())


@pytest.mark.parametrize("fn", ALL_PARSERS, ids=lambda f: f.__name__)
def test_binary_garbage_and_non_utf8(fn):
    rng = random.Random(7)
    blob = bytes(rng.randrange(256) for _ in range(20000))
    facts = fn(blob)
    json.dumps(facts.to_dict())
    latin = b"link status: UP\nipaddr:10.0.0.1\nnetmask:255.255.255.0\n" + b"\xff\xfe\x80\n"
    json.dumps(fn(latin).to_dict())


@pytest.mark.parametrize("name", HOSTILE_SOURCES)
def test_truncated_at_random_points(name):
    text = read_fixture(H + name)
    rng = random.Random(11)
    for cut in sorted({rng.randrange(len(text)) for _ in range(40)} | {1, len(text) - 1}):
        part = text[:cut]
        for fn in ALL_PARSERS:
            json.dumps(fn(part).to_dict())
        split_loop_output(part)


@pytest.mark.parametrize("name", HOSTILE_SOURCES)
def test_reordered_lines(name):
    lines = read_fixture(H + name).splitlines()
    rng = random.Random(3)
    for _ in range(5):
        rng.shuffle(lines)
        text = "\n".join(lines)
        for fn in ALL_PARSERS:
            json.dumps(fn(text).to_dict())


def test_link_stat_reordered_records_are_flagged():
    text = (
        "[devid 0]current time        : Tue Oct 28 21:46:46 2025\n"
        "[devid 0]link change records :\n"
        "[devid 0]    Sun Oct  5 10:13:35 2025    LINK UP\n"
        "[devid 0]    Sun Oct  5 10:13:51 2025    LINK DOWN\n"
    )
    f = parse_link_stat(text)
    assert "not newest-first" in f.problems[0]


def test_huge_inputs_are_linear_and_problems_are_capped():
    big_loop = "for i in {0..7}; do hccn_tool -i $i -link -g ; done\n" + "link status: UP\n" * 50000
    f = parse_link(big_loop)
    assert len(f.devices) == 50000
    assert len(f.problems) <= 201
    stat = "packet statistics:\n" + "".join(f"c{i}:{i}\n" for i in range(50000))
    assert len(parse_stat(stat).devices[0].counters) == 50000
    ls = "[devid 0]current time : Tue Oct 28 21:46:46 2025\n" + (
        "[devid 0]    Sun Oct  5 10:13:35 2025    LINK UP\n" * 50000
    )
    assert len(parse_link_stat(ls).devices[0].records) == 50000
    junk = "x" * 2_000_000
    for fn in ALL_PARSERS:
        fn(junk)
        fn("garbage line\n" * 50000)
