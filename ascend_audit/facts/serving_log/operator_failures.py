"""Operator-level failures a log states without an Ascend error code: no kernel for the backend,
no kernel for a dtype, no fake / Meta kernel for graph compile, an opType no engine supports, a
custom operator that is not registered."""

from __future__ import annotations

import re

# (kind, pattern): the named group "op" is the operator when the line names it.
RULES: list[tuple[str, re.Pattern[str]]] = [
    (k, re.compile(p))
    for k, p in (
        # torch's dispatcher: "Could not run 'aten::foo' with arguments from the 'PrivateUse1' …"
        (
            "no_backend_kernel",
            r"Could not run '(?P<op>[\w:.]{1,120})' with arguments from the '\w+'",
        ),
        # a kernel without this dtype: "\"addmm_impl_cpu_\" not implemented for 'Half'"
        ("dtype_not_implemented", r"\"(?P<op>\w{1,80})\" not implemented for '\w+'"),
        # graph compile (dynamo / fake tensors) found no fake impl or Meta kernel for a custom op
        (
            "no_fake_kernel",
            r"(?P<op>[\w:.]{1,120}): attempted to run this operator with Meta tensors",
        ),
        (
            "no_fake_kernel",
            r"(?:unsupported operator:|UnsupportedOperatorException:) (?P<op>[\w.]{1,120}?)"
            r"(?:\.default)?(?=[\s(]|$)",
        ),
        ("no_fake_kernel", r"Operator does not support running with fake tensors"),
        # a custom op library not built / loaded: "'_OpNamespace' '_C_ascend' object has no
        # attribute 'npu_apply_top_k_top_p'"
        (
            "op_not_registered",
            r"'_OpNamespace' '(?P<ns>\w{1,60})' object has no attribute '(?P<op>\w{1,120})'",
        ),
        # CANN's engine placement: "Optype [TransData] of Ops kernel [AIcoreEngine] is unsupported"
        (
            "optype_unsupported",
            r"Optype \[(?P<op>\w{1,80})\] of Ops kernel \[\w{1,60}\] is unsupported",
        ),
        (
            "optype_unsupported",
            r"No supported Ops kernel and engine are found for \[[^\]]{0,120}\], "
            r"optype \[(?P<op>\w{1,80})\]",
        ),
        # torch_npu / vllm-ascend refusing an operator on the NPU
        (
            "not_implemented_on_npu",
            r"NotImplementedError: (?=[^\n]{0,400}\b(?:op|operator|kernel|aten::\w+)\b)"
            r"(?=[^\n]{0,400}\b(?:npu|NPU)\b)",
        ),
    )
]
_TRIGGERS = (
    "Could not run",
    "not implemented for",
    "Meta tensors",
    "nsupported operator",
    "OperatorException",
    "fake tensors",
    "_OpNamespace",
    "Optype [",
    "optype [",
    "NotImplementedError",
)
LABELS = {
    "no_backend_kernel": "the operator has no kernel for this backend",
    "dtype_not_implemented": "the operator's kernel does not implement this dtype",
    "no_fake_kernel": "graph compile found no fake-tensor / Meta kernel for the operator",
    "op_not_registered": "the custom operator is not registered (its library not built or loaded)",
    "optype_unsupported": "no operator engine supports this opType",
    "not_implemented_on_npu": "the operator is not implemented on the NPU",
}


def operator_failure(text: str) -> tuple[str, str | None] | None:
    """(kind, operator or None) when the line states an operator-level failure, else None."""
    if not any(t in text for t in _TRIGGERS):
        return None
    for kind, rx in RULES:
        m = rx.search(text)
        if m:
            op, ns = m.groupdict().get("op"), m.groupdict().get("ns")
            return kind, f"{ns}.{op}" if ns and op else op
    return None
