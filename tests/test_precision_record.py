"""A precision is one record (issue 65): what the counters, the tuned knobs, the CUDA macros and the
impl tables know of a format comes from membound.model.precision's Format, with the names, options and
(impl, precision) pairs they had before."""

import ast
import re
from pathlib import Path

from membound.counters import mma, ncu, ncu_csv, rocprof, rows
from membound.kernels import gemv, harness, scale, spmv, stencil
from membound.kernels.stencil import launch, runner, sp_layout
from membound.model import precision

ROOT = Path(__file__).resolve().parents[1]
NON_FP64 = re.compile(r"(?<![a-z0-9])(fp32|fp16|bf16|tf32|f32|f16)(?![a-z0-9])", re.IGNORECASE)
# Code that names a non-fp64 precision on purpose, per file: each entry says why the record cannot say it.
ALLOWED = {
    # the tuned knobs per precision (a family's data, measured on a GPU; a new precision borrows one by tuned_as)
    "src/membound/kernels/spmv/__init__.py": {"fp32", "fp16"},
    "src/membound/kernels/stencil/sp_layout.py": {"fp32", "fp16"},
    # the paper's original codes and their outputs: fp64 and fp32 only, named by those codes' own flags
    "src/membound/originals/parsers.py": {"fp32"},
    "src/membound/originals/run.py": {"fp32"},
    # a kernel symbol of gemv_half2.cu: the fp16 GEMV kept its pre-bf16 name (the committed counter rows')
    "src/membound/kernels/gemv/__init__.py": {"fp16"},
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def named_precisions(text: str) -> set[tuple[int, str]]:
    """(line, name) of every non-fp64 precision or tensor-core type named in code: an identifier (split
    at underscores) or a string constant that is a key, not prose (no whitespace); docstrings, prose
    messages and comments don't count."""
    tree = ast.parse(text)
    docs, found = _docstrings(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            word = None if id(node) in docs or re.search(r"\s", node.value) else node.value
        else:
            word = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "arg", None) or \
                (node.name if isinstance(node, (ast.FunctionDef, ast.ClassDef)) else None)
        if isinstance(word, str):
            found |= {(node.lineno, m.lower()) for m in NON_FP64.findall(word.replace("_", " "))}
    return found


def test_no_code_outside_the_record_names_a_non_fp64_precision():
    """A new precision needs no edit of src/ or tools/ beyond its record (ALLOWED: the tuned data and
    the original codes, which name theirs on purpose)."""
    offending = []
    for path in sorted([*ROOT.glob("src/**/*.py"), *ROOT.glob("tools/*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "src/membound/model/precision.py":
            continue
        offending += [f"{rel}:{line}: {name}" for line, name in sorted(named_precisions(path.read_text()))
                      if name not in ALLOWED.get(rel, set())]
    assert not offending, "name the precision through its record (membound.model.precision):\n" + "\n".join(offending)


def test_the_structural_check_finds_what_the_code_named_before():
    """The checker is not blind: it finds the literals the counters and the GEMV table held before
    issue 65's record fields (git 766e51e), but neither docstrings nor prose."""
    before = ('OPS = {"tf32": ("tensor_tf32_ops", "sm__ops_path_tensor_src_tf32_dst_fp32")}\n'
              'def f(precision):\n    """bf16 and fp16 in a docstring."""\n'
              '    if precision == "bf16":\n        raise ValueError("no bf16 here")\n'
              'TC_PREF = {"fp64": (4, 0), "fp16": (16, 16)}\nHALF_F16_RF = 2\n')
    assert {n for _, n in named_precisions(before)} == {"tf32", "fp32", "bf16", "fp16", "f16"}
    assert (4, "bf16") in named_precisions(before) and not {line for line, _ in named_precisions(before)} & {3, 5}


def test_every_impl_runs_the_pairs_it_ran_before():
    """(impl, backend, precisions) of every family as at git 766e51e: an Impl runs all precisions unless
    it names a subset (cuBLAS's D and S GEMV, the 16-bit GEMV, the 2:4-sparse stencils)."""
    every = ("fp64", "fp32", "fp16", "bf16")
    expected = {
        ("scale", "cuda_core", "cuda"): every, ("scale", "tensor_core", "cuda"): every,
        ("scale", "tensor_core_twin", "cuda"): every, ("scale", "numpy", "cpu"): every,
        ("scale", "numpy_mma", "cpu"): every, ("scale", "numpy_mma_twin", "cpu"): every,
        ("gemv", "cublas_dgemv", "cuda"): ("fp64",), ("gemv", "cublas_sgemv", "cuda"): ("fp32",),
        ("gemv", "gemv_half2", "cuda"): ("fp16", "bf16"), ("gemv", "gemv_tc", "cuda"): every,
        ("gemv", "numpy", "cpu"): every, ("gemv", "numpy_mma", "cpu"): every,
        ("spmv", "cusparse_csr", "cuda"): every, ("spmv", "dasp_tc", "cuda"): every,
        ("spmv", "dasp_tc_twin", "cuda"): every, ("spmv", "scipy_csr", "cpu"): every,
        ("spmv", "numpy_mma", "cpu"): every, ("spmv", "numpy_mma_twin", "cpu"): every,
        ("stencil", "cc_naive", None): every, ("stencil", "cc_tb", None): every, ("stencil", "tc", None): every,
        ("stencil", "tc_twin", None): every, ("stencil", "tc_sparse", None): ("fp32", "fp16", "bf16"),
    }
    table = {(i.family, i.name, i.backend): i.precisions for f in (scale, gemv, spmv, stencil) for i in f.IMPLS}
    assert table == expected
    for backend in ("cuda", "cpu"):
        pairs = {(i.family, i.name, p) for f in (scale, gemv, spmv, stencil)
                 for i, p in harness.select(f.IMPLS, backend, precision.PRECISIONS)}
        assert pairs == {(f, n, p) for (f, n, b), ps in expected.items() if b in (None, backend) for p in ps}


def test_the_counter_names_are_the_committed_ones():
    """ncu's metrics and columns, the MMA regex and rocprof's counters, from the records, in the order
    of the committed counter files (results/reference/*/raw/counters/*.csv)."""
    assert [c for c in rows.COLUMNS if c.startswith("tensor_") and c.endswith("_ops")] == [
        "tensor_fp64_ops", "tensor_tf32_ops", "tensor_fp16_ops", "tensor_bf16_ops"]
    committed_files = [f for f in ROOT.glob("results/reference/*/raw/counters/*.csv") if ".rows." not in f.name]
    assert committed_files
    for committed in committed_files:        # written before bf16: no tensor_bf16_ops (raw.Schema's `later`)
        header = committed.read_text().split("\n", 1)[0].split(",")
        assert [c for c in rows.COLUMNS if c in header] == [c for c in header if c in rows.COLUMNS], committed
    assert rows.COLUMNS[9:18] == ["dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma"]
    assert {m: c for m, c in ncu_csv.METRICS.items() if c.startswith("tensor_")} == {
        "sm__ops_path_tensor_src_fp64.sum": "tensor_fp64_ops",
        "sm__ops_path_tensor_src_tf32_dst_fp32.sum": "tensor_tf32_ops",
        "sm__ops_path_tensor_src_fp16.sum": "tensor_fp16_ops",
        "sm__ops_path_tensor_src_bf16_dst_fp32.sum": "tensor_bf16_ops"}
    assert mma.OPS["bf16"] == ("tensor_bf16_ops", "sm__ops_path_tensor_src_bf16_dst_fp32")
    assert mma.MMA.pattern.endswith(r"(f64|tf32|f16|bf16)\b")
    assert "sm__ops_path_tensor_src_tf32_dst_fp32.sum" in ncu.OPTIONAL
    assert len(ncu.OPTIONAL) == 6  # the sixth: smsp__inst_executed, the issue-slot roof (analysis/roofs.py)
    assert rocprof.MFMA == [f"SQ_INSTS_VALU_MFMA_MOPS_{s}" for s in ("F64", "F32", "F16", "BF16")]
    assert {p: v[2] for p, v in rocprof.VALU.items()} == {
        "fp64": "SQ_INSTS_VALU_FMA_F64", "fp32": "SQ_INSTS_VALU_FMA_F32", "fp16": "SQ_INSTS_VALU_FMA_F16"}


def test_the_kernels_build_options_per_precision_are_the_committed_ones():
    """The -D options (NVRTC's, part of CuPy's cache key) that depend on the precision: the stencils'
    format macro, SpMV's tuned knobs and the 2:4 stencils' fragment budget; bf16 reads fp16's tuning."""
    assert {p: runner.options(launch.format_macros(p)) for p in precision.PRECISIONS} == {
        "fp64": (), "fp32": (), "fp16": (), "bf16": ("-DBF16=1",)}
    knobs = {p: {k: v for k, v in spmv.tc_knobs(p, False, 1, 2).items() if k.startswith("TC_")}
             for p in precision.PRECISIONS}
    assert {p: (k["TC_UNROLL"], k["TC_SEGFREE"], k["TC_PIPE"], k["TC_PREF"]) for p, k in knobs.items()} == {
        "fp64": (4, 1, 1, 4), "fp32": (4, 0, 0, 4), "fp16": (2, 1, 1, 16), "bf16": (2, 1, 1, 16)}
    for dims, shape in ((2, "box"), (3, "star")):
        fp16, _ = sp_layout.structure_module(shape, dims, 1, 2, "fp16")
        bf16, _ = sp_layout.structure_module(shape, dims, 1, 2, "bf16")
        assert bf16 == {**fp16, "BF16": 1} and fp16["PREC"] == 16
    assert sp_layout.structure_module("box", 2, 1, 2, "fp32")[0]["PREC"] == 32


def test_every_record_names_its_counter_and_a_run_tuning():
    """Each Format names ncu's tensor-path counter of its type, and borrows tuning (tuned_as) only from a
    precision the kernels run that is tuned itself."""
    for f in precision.FORMATS.values():
        assert "_src_" in f.ncu_tensor and f.tensor_column.startswith("tensor_"), f.name
        assert f.tuned in precision.PRECISIONS and precision.FORMATS[f.tuned].tuned == f.tuned, f.name
