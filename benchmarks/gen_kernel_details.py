"""Write a synthetic torch_npu kernel_details.csv of N rows in the real 2023 or 2025 layout.

The headers are the ones torch_npu writes (same columns, same order as the real files in
../shared/fixtures/msprof); the 2025 layout quotes `Start Time(us)` with a trailing TAB inside
the quotes, as the profiler does. Output is deterministic for a given seed.

    python benchmarks/gen_kernel_details.py --rows 1000000 --layout 2023 -o DIR
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

HEADER_2023 = (
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),"
    "Wait Time(us),Block Dim,Mix Block Dim,Input Shapes,Input Data Types,Input Formats,"
    "Output Shapes,Output Data Types,Output Formats,Context ID,aicore_time(us),aic_total_cycles,"
    "aic_mac_fp16_ratio,aic_mac_int8_ratio,aic_cube_fops,aic_vector_fops,aiv_time(us),"
    "aiv_total_cycles,aiv_vec_fp32_ratio,aiv_vec_fp16_ratio,aiv_vec_int32_ratio,"
    "aiv_vec_misc_ratio,aiv_cube_fops,aiv_vector_fops"
)
HEADER_2025 = (
    "Step Id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),"
    "Duration(us),Wait Time(us),Block Dim,Mix Block Dim,HF32 Eligible,Input Shapes,"
    "Input Data Types,Input Formats,Output Shapes,Output Data Types,Output Formats,Context ID,"
    "aicore_time(us),aic_total_cycles,aic_mac_time(us),aic_mac_ratio,aic_scalar_time(us),"
    "aic_scalar_ratio,aic_mte1_time(us),aic_mte1_ratio,aic_mte2_time(us),aic_mte2_ratio,"
    "aic_fixpipe_time(us),aic_fixpipe_ratio,aic_icache_miss_rate,aiv_time(us),aiv_total_cycles,"
    "aiv_vec_time(us),aiv_vec_ratio,aiv_scalar_time(us),aiv_scalar_ratio,aiv_mte2_time(us),"
    "aiv_mte2_ratio,aiv_mte3_time(us),aiv_mte3_ratio,aiv_icache_miss_rate,cube_utilization(%)"
)

# (name stem, type, core, weight, mean duration us, shapes, dtype)
OPS = (
    (
        "aclnnMatmul_MatMulV3Common_MatMulV3",
        "MatMulV3",
        "AI_CORE",
        14,
        180.0,
        "4,4096;4096,512",
        "BF16",
    ),
    ("aclnnAdd_AddAiCore_Add", "Add", "AI_VECTOR_CORE", 16, 12.0, "4,4096;4,4096", "BF16"),
    ("aclnnMul_MulAiCore_Mul", "Mul", "AI_VECTOR_CORE", 12, 9.0, "4,4096;4,4096", "BF16"),
    (
        "aclnnRmsNorm_RmsNorm_RmsNorm",
        "RmsNorm",
        "AI_VECTOR_CORE",
        6,
        20.0,
        "4,4096;4096",
        "BF16",
    ),
    (
        "aclnnAddRmsNorm_AddRmsNorm_AddRmsNorm",
        "AddRmsNorm",
        "AI_VECTOR_CORE",
        5,
        25.0,
        "4,4096;4,4096;4096",
        "BF16",
    ),
    (
        "aclnnFlashAttentionScore_FlashAttentionScore_FlashAttentionScore",
        "FlashAttentionScore",
        "MIX_AIC",
        6,
        400.0,
        "4,32,128;4,8,128;4,8,128",
        "BF16",
    ),
    ("aclnnSwiGlu_SwiGlu_SwiGlu", "SwiGlu", "AI_VECTOR_CORE", 5, 30.0, "4,22016", "BF16"),
    ("aclnnCast_CastAiCore_Cast", "Cast", "AI_VECTOR_CORE", 6, 6.0, "4,4096", "FLOAT"),
    ("trans_TransData", "TransData", "AI_VECTOR_CORE", 2, 15.0, "4096,512", "FLOAT16"),
    ("trans_Cast", "Cast", "AI_VECTOR_CORE", 2, 5.0, "4096,512", "FLOAT16"),
    (
        "aclnnGroupedMatmul_GroupedMatmul_GroupedMatmul",
        "GroupedMatmul",
        "MIX_AIV",
        3,
        90.0,
        "1024,4096;8,4096,1536",
        "BF16",
    ),
    ("aclnnInplaceZero_MemSetAiCore_MemSet", "MemSet", "AI_VECTOR_CORE", 8, 2.0, "1024", "INT32"),
    ("hcom_allReduce_", "hcom_allReduce_", "HCCL", 2, 800.0, "", ""),
    ("StatelessDropOutGenMask", "DSAStatelessGenBitMask", "DSA_SQE", 1, 300.0, "1", "INT64"),
    ("aclnnNonzero_NonZeroAiCpu_NonZero", "NonZero", "AI_CPU", 0.05, 120.0, "8192", "BOOL"),
    ("aclnnCast_CastAiCpu_Cast", "Cast", "AI_CPU", 0.05, 90.0, "", "INT64"),
)


def _dtype(layout: str, d: str) -> str:
    if not d:
        return "N/A"
    return f"DT_{d}" if layout == "2025" and d != "FLOAT" else d


def generate(rows: int, layout: str, out_dir: Path, seed: int = 20240101, ops: tuple = OPS) -> Path:
    """Write OUT_DIR/ASCEND_PROFILER_OUTPUT/kernel_details.csv and return its path."""
    rng = random.Random(seed)
    target = out_dir / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    picks = rng.choices(range(len(ops)), weights=[o[3] for o in ops], k=rows)
    start = 1736413971558972.912
    fmt_na = "N/A"
    with target.open("w", encoding="utf-8", newline="") as fh:
        fh.write((HEADER_2023 if layout == "2023" else HEADER_2025) + "\n")
        buf: list[str] = []
        for i, k in enumerate(picks):
            stem, op_type, core, _w, mean, shapes, dt = ops[k]
            dur = round(mean * (0.5 + rng.random()), 3)
            wait = round(rng.random() * 3, 3)
            start += dur + wait
            name = f"{stem}_{i % 97}" if stem.startswith("trans_") else stem
            hccl = core == "HCCL"
            task = fmt_na if hccl else str(1000 + i % 65000)
            stream = fmt_na if hccl else "2"
            shp = fmt_na if hccl else (f'"""{shapes}"""' if shapes else '""')
            dts = _dtype(layout, dt)
            fmt = fmt_na if hccl else ("ND" if layout == "2025" else "FORMAT_ND")
            block = "0" if hccl else str(8 + i % 40)
            cycles = int(dur * 1800)
            if layout == "2023":
                pmu = (
                    ",".join([fmt_na] * 14)
                    if hccl
                    else f"{dur:.2f},{cycles},0,0,0,0,{dur:.2f},{cycles},0,0,0.08,0,0,5856"
                )
                buf.append(
                    f"1,4294967295,{task},{stream},{name},{op_type},{core},{start:.1f},{dur},{wait},"
                    f"{block},0,{shp},{dts},{fmt},{shp},{dts},{fmt},N/A,{pmu}\n"
                )
            else:
                pmu = (
                    ",".join([fmt_na] * 25)
                    if hccl
                    else (
                        f"{dur:.3f},{int(dur * 1800)},{dur * 0.8:.3f},0.8,{dur * 0.4:.3f},0.45,"
                        f"{dur * 0.6:.3f},0.6,{dur * 0.9:.3f},0.9,5.7,0.031,0.001,"
                        "0,0,0,0,0,0,0,0,0,0,0,79.295"
                    )
                )
                state = fmt_na if hccl else "dynamic"
                hf32 = fmt_na if hccl else "NO"
                buf.append(
                    f'19,4294967295,{task},{stream},{name},{op_type},{state},{core},"{start:.3f}\t",'
                    f"{dur},{wait},{block},0,{hf32},{shp},{dts},{fmt},{shp},{dts},{fmt},N/A,{pmu}\n"
                )
            if len(buf) >= 10_000:
                fh.write("".join(buf))
                buf.clear()
        fh.write("".join(buf))
    return target


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--layout", choices=("2023", "2025"), default="2023")
    ap.add_argument("--seed", type=int, default=20240101)
    ap.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    args = ap.parse_args(argv)
    path = generate(args.rows, args.layout, args.out, args.seed)
    print(f"{path} {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
