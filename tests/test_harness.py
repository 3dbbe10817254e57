"""The shared lifecycle (kernels/harness.py), the family registry and the one-way import structure."""

import ast
import contextlib
import re
import sys
import time
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml

from membound import families
from membound.kernels import arg_parser, harness
from membound.model import precision
from membound.run import codedeps, measure, raw, timing

REPO = Path(__file__).resolve().parents[1]
IMPL = harness.Impl("scale", "numpy", "cuda_core", "STREAM", "cpu")


def case(wrong=False):
    b = np.arange(1.0, 101.0)
    a = np.full(100, np.nan)

    def run():
        np.multiply(b, 2.0, out=a)
        if wrong:
            a[-1] = 0.0
        return a

    return harness.Case(run=run, output=np.asarray, reference=2.0 * b, tol=1e-14, what="toy n=100",
                        row={"problem": "n=100", "n": 100, "work_items": 100}, work=1600, metric="GB/s")


def test_measure_checks_times_and_shapes_the_row():
    row = harness.measure(IMPL, case, "cpu", 1, 4, rep=3)
    assert row["rep"] == 3 and row["reps"] == 4 and row["rel_err"] == 0.0 and row["kernel"] == "scale"
    assert row["value"] == pytest.approx(1600 / row["t_median_s"] / 1e9)
    assert set(row) <= set(measure.ROW_COLUMNS)


def test_a_counter_run_frees_cached_device_memory_before_its_one_profiled_launch(monkeypatch):
    events = []
    monkeypatch.setattr(harness, "free_device_memory", lambda: events.append("free"))
    monkeypatch.setattr(harness, "nvtx_range", lambda tag: events.append(tag) or contextlib.nullcontext())
    row = harness.measure(IMPL, case, "cpu", 3, 5, counters=True)
    assert events == ["free", measure.launch_tag("scale", "numpy", "n=100", None, "fp64")] and row["reps"] == 1 and row["warmup"] == 0


def test_wrong_output_raises_and_run_jobs_writes_nothing(tmp_path):
    with pytest.raises(measure.CheckError, match="toy n=100"):
        harness.run_jobs("cpu", [(IMPL, lambda: case(wrong=True))], tmp_path / "x.csv", 0, 1)
    assert not list(tmp_path.iterdir())


def test_run_jobs_writes_rows_with_rep_and_run_info(tmp_path):
    harness.run_jobs("cpu", [(IMPL, case), (IMPL, case)], tmp_path / "x.csv", 0, 2, rep=1)
    frame = pd.read_csv(tmp_path / "x.csv")
    assert list(frame.columns) == measure.ROW_COLUMNS and (frame.rep == 1).all() and len(frame) == 2
    assert frame.device.notna().all()


def test_rows_written_before_rep_and_graph_timing_read_as_rep_0_timed_per_launch():
    old = pd.DataFrame({"kernel": ["scale"], "t_median_s": [2e-6]})
    new = raw.later_columns(old)
    assert new["rep"].tolist() == [0] and new["t_launch_median_s"].tolist() == [2e-6]
    assert raw.later_columns(new.assign(rep=3))["rep"].tolist() == [3]


def test_impls_select_by_backend_and_reject_unknown_units():
    from membound.kernels import scale, stencil

    assert [i.name for i, _ in harness.select(scale.IMPLS, "cpu")] == ["numpy", "numpy_mma", "numpy_mma_twin"]
    assert {i.name for i, _ in harness.select(stencil.IMPLS, "cuda", ("fp64", "fp32", "fp16"))} == {i.name for i in stencil.IMPLS}
    with pytest.raises(ValueError, match="unit"):
        harness.Impl("scale", "x", "vector", "STREAM")
    assert harness.skip_reason(harness.Impl("scale", "x", "tensor_core", "STREAM"), "cpu") is None


def test_raw_paths_of_the_registry():
    fam = families.FAMILIES
    assert fam["scale"].raw("r") == "r/raw/scale.csv" and fam["scale"].raw("r", rep=2) == "r/raw/scale.rep2.csv"
    assert fam["spmv"].raw("r", "dc2", prefix="counters/") == "r/raw/counters/spmv/dc2.csv"
    assert families.rep_index("") == 0 and families.rep_index(".rep12") == 12
    config = {"stencil": {"kernels": {"2d5pt": {}}}}
    paths = families.raw_paths("r", config, [{"name": "dc2"}], repeats=2)   # a job per family and repetition
    assert paths == ["r/raw/scale.csv", "r/raw/scale.rep1.csv", "r/raw/stencil.csv", "r/raw/stencil.rep1.csv",
                     "r/raw/spmv.csv", "r/raw/spmv.rep1.csv", "r/raw/gemv.csv", "r/raw/gemv.rep1.csv"]
    committed = {"r/raw/stencil.csv", "r/raw/spmv/dc2.csv", "r/raw/spmv/dc2.rep2.csv"}   # SpMV: a file per case
    assert families.raw_paths("r", config, [{"name": "dc2"}], repeats=3, exists=committed.__contains__) == [
        "r/raw/scale.csv", "r/raw/stencil.csv", "r/raw/spmv/dc2.csv", "r/raw/spmv/dc2.rep2.csv", "r/raw/gemv.csv"]
    for family in fam.values():
        assert all((REPO / f).is_file() for f in family.code), family.name


# The layers of src/membound, bottom up, and what each may import besides itself (docs/architecture.md).
ALLOWED = {
    "kept": set(),
    "model": {"kept"},
    "families": {"model"},
    "run": {"kept"},
    "specs": {"model", "run"},             # a spec from the device: the precision records, the device's report
    "matrices": {"model", "run"},
    "kernels": {"kept", "model", "run", "matrices"},
    "counters": {"model", "run"},          # model: the precisions' MMA operand types and the spec's MMA shapes
    "originals": {"run", "matrices"},
    "analysis": {"model", "families", "run", "originals"},
    "plots": {"model", "families", "run", "analysis", "originals"},
    "ae": {"families", "run", "analysis"},
    "report_text": {"model", "families", "originals"},
}


def layer_of(module: str) -> str:
    """The layer of a dotted membound module: its subpackage, or a root module's name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "membound"


def membound_imports(path: Path) -> set[str]:
    """The membound modules a source file imports (`from membound import x` names membound.x)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "membound"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "membound":
            found |= {f"membound.{a.name}" for a in node.names} if node.module == "membound" else {node.module}
    return found


def test_imports_run_one_way():
    src = REPO / "src"
    layers = set()
    for path in (src / "membound").rglob("*.py"):
        module = ".".join(path.relative_to(src).with_suffix("").parts).removesuffix(".__init__")
        own = layer_of(module)
        layers.add(own)
        for dep in membound_imports(path):
            other = layer_of(dep)
            assert other in (own, "membound") or other in ALLOWED[own], f"{module} ({own}) imports {dep} ({other})"
    assert layers == set(ALLOWED) | {"membound"}, "a new layer needs its row in ALLOWED and docs/architecture.md"
    order = list(ALLOWED)                          # the table itself runs one way: only lower rows
    assert all(order.index(dep) < order.index(own) for own, deps in ALLOWED.items() for dep in deps)


def test_codedeps_follows_imports_transitively():
    deps = codedeps.code(REPO, "scripts/claims.py")
    assert "scripts/claims.py" in deps and "src/membound/model/equations.py" in deps
    assert "src/membound/model/geometry.py" in deps
    assert not any("plots" in d for d in deps)


@pytest.mark.gpu
def test_gpu_short_kernel_is_graph_timed_and_long_is_not():
    import cupy as cp

    from membound.kernels import scale

    impl = harness.select(scale.IMPLS, "cuda")[0][0]
    rng = np.random.default_rng(1)
    short = harness.measure(impl, lambda: scale.prepare(impl, "cuda", 2**14, rng), "cuda", 2, 5)
    assert "CUDA graph" in short["note"] and short["t_median_s"] < short["t_launch_median_s"]
    long = harness.measure(impl, lambda: scale.prepare(impl, "cuda", 2**26, rng), "cuda", 2, 5)
    assert "graph" not in long["note"] and long["t_launch_median_s"] == pytest.approx(long["t_median_s"])
    cp.cuda.Device().synchronize()


def test_a_launch_slowed_by_the_host_is_still_graph_timed_when_its_device_time_is_short(monkeypatch):
    """The 9876306 H100 run: fp32 SCALE at 2^23 took 79 us a launch timed alone (a busy CPU) and 24 us
    on the device; the graph probe, not the launch alone, decides."""
    graphs = []

    def graph(run, batch, reps):
        graphs.append(batch)
        return [24e-6] * reps

    monkeypatch.setattr(timing, "time_gpu", lambda run, warmup, reps, warmup_s=0: [79e-6] * reps)
    monkeypatch.setattr(timing, "time_graph", graph)
    t = timing.time_kernel(lambda: None, "cuda", 2, 5)
    assert graphs[0] == timing.PROBE_LAUNCHES and graphs[1] == int(timing.GRAPH_SAMPLE_S // 24e-6)
    assert t.seconds == [24e-6] * 5 and t.launch_median == 79e-6 and "24.0 us in a graph of 8" in t.note
    monkeypatch.setattr(timing, "time_graph", lambda run, batch, reps: [60e-6] * reps)   # long on the device too
    assert timing.time_kernel(lambda: None, "cuda", 2, 5) == timing.Timing([79e-6] * 5, 79e-6, "")
    monkeypatch.setattr(timing, "time_gpu", lambda run, warmup, reps, warmup_s=0: [2e-3] * reps)      # long: no probe
    monkeypatch.setattr(timing, "time_graph", lambda *a: pytest.fail("a long kernel was probed"))
    assert timing.time_kernel(lambda: None, "cuda", 2, 5).note == ""


def test_no_module_over_300_lines():
    long = {str(p.relative_to(REPO)): n for p in (REPO / "src" / "membound").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 300}
    assert not long, f"split these modules: {long}"


MMA_SHAPE = re.compile(r"\bm(8|16)n(8|16)k(4|8|16|32)\b")     # an NVIDIA MMA shape in PTX's spelling


def _code_constants(tree):
    """The constants of a module's code: strings but docstrings, and tuples or lists of integers."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value
        elif isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == 3 and all(
                isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
            yield tuple(e.value for e in node.elts)


def test_mma_shapes_are_code_constants_only_in_the_precision_record():
    """An MMA shape (m, n, k) or instruction is a constant of model/precision.py's records alone (and the
    CUDA sources'): every family, the counters, the specs and the plots read it from there."""
    record = precision.FORMATS.values()
    shapes = {m.shape for f in record for m in (f.mma, f.mfma, f.mma_sp) if m}
    found = []
    for path in [*(REPO / "src" / "membound").rglob("*.py"), *(REPO / "tools").glob("*.py")]:
        if path == REPO / "src" / "membound" / "model" / "precision.py":
            continue
        for value in _code_constants(ast.parse(path.read_text())):
            if value in shapes or (isinstance(value, str) and MMA_SHAPE.search(value)):
                found.append(f"{path.relative_to(REPO)}: {value!r}")
    assert not found, found
    for spec in (REPO / "config" / "gpus").glob("*.yaml"):
        assert not {"mma", "mma_sp"} & set(yaml.safe_load(spec.read_text())), spec


def source_lines_per_directory() -> dict[str, int]:
    """Python and CUDA lines of each directory of src/membound, its own files (not its subfolders')."""
    lines: dict[str, int] = {}
    root = REPO / "src" / "membound"
    for path in root.rglob("*"):
        if path.suffix in (".py", ".cu", ".cuh") and "__pycache__" not in path.parts:
            folder = str(path.parent.relative_to(root.parent))
            lines[folder] = lines.get(folder, 0) + len(path.read_text().splitlines())
    return lines


def test_no_package_directory_holds_over_a_quarter_of_the_source_lines():
    lines = source_lines_per_directory()
    total = sum(lines.values())
    assert {folder: n for folder, n in lines.items() if n > total / 4} == {}, (total, lines)


def test_a_family_is_a_folder():
    """Each registry family is a package kernels/<name>/ that holds its code (families.Family.code)."""
    kernels = REPO / "src" / "membound" / "kernels"
    for family in families.FAMILIES.values():
        assert (kernels / family.name / "__init__.py").is_file() and (kernels / family.name / "__main__.py").is_file()
        assert all(f.startswith(f"src/membound/kernels/{family.name}/") for f in family.code)
        assert any(f.endswith(".cu") for f in family.code), family.name
    assert sorted(p.name for p in kernels.glob("*.py")) == ["__init__.py", "batch.py", "harness.py"]


def test_the_package_tree_in_the_docs_matches_the_sources():
    """docs/architecture.md's tree of src/membound: each line's modules belong to the folder above it."""
    text = (REPO / "docs" / "architecture.md").read_text()
    tree = text.split("```\nsrc/membound/\n", 1)[1].split("```", 1)[0]
    named, folders = set(), []                     # (indent, folder) of the enclosing folders
    for line in tree.splitlines():
        indent = len(line) - len(line.lstrip())
        folders = [(i, f) for i, f in folders if i < indent]
        first = line.split()[0]
        if first.endswith("/"):
            folders.append((indent, first))
        here = "".join(f for _, f in folders if not first.endswith("/") or f != first)
        named |= {here + m for m in re.findall(r"\b\w+\.py\b", line)}
    on_disk = {str(p.relative_to(REPO / "src" / "membound")) for p in (REPO / "src" / "membound").rglob("*.py")}
    assert named == on_disk, (sorted(on_disk - named), sorted(named - on_disk))


class _FakePool:
    def __init__(self, log):
        self.log = log

    def malloc(self, size):
        return size

    def free_all_blocks(self):
        self.log.append("async pool freed")


def _fake_cupy(log, hip=False):
    """A stand-in for cupy: what use_async_pool and free_device_memory call, recorded."""
    from types import SimpleNamespace as NS

    cuda = NS(runtime=NS(is_hip=hip), MemoryAsyncPool=lambda: _FakePool(log),
              set_allocator=lambda f: log.append(("allocator", f.__self__.__class__.__name__)),
              Device=lambda: NS(synchronize=lambda: None))
    pool, pinned = NS(free_all_blocks=lambda: log.append("default pool freed")), NS(free_all_blocks=lambda: None)
    return NS(cuda=cuda, get_default_memory_pool=lambda: pool, get_default_pinned_memory_pool=lambda: pinned)


@pytest.mark.parametrize("hip", [False, True])
def test_cuda_cases_take_their_arrays_from_one_stream_ordered_pool(monkeypatch, hip):
    log = []
    monkeypatch.setitem(sys.modules, "cupy", _fake_cupy(log, hip))
    monkeypatch.setattr(harness, "_POOL", [])
    harness.use_async_pool()
    harness.use_async_pool()     # once per process
    harness.free_device_memory()
    assert log == (["default pool freed"] if hip else [("allocator", "_FakePool"), "async pool freed"])


def test_warm_up_makes_its_calls_then_goes_on_for_its_seconds():
    calls, syncs = [], []
    timing.warm_up(lambda: calls.append(1), 3)
    assert len(calls) == 3
    calls.clear()
    start = time.perf_counter()
    timing.warm_up(lambda: (calls.append(1), time.sleep(0.005)), 2, 0.05, lambda: syncs.append(1))
    assert time.perf_counter() - start >= 0.05 and len(calls) >= 5
    assert len(syncs) == len(calls) - 1   # the device synchronized before each look at the clock


def test_a_warm_up_in_seconds_is_in_the_row_and_the_config_and_never_negative():
    assert "warm-up" not in harness.measure(IMPL, case, "cpu", 1, 2)["note"]
    assert "warm-up: 1 calls and on to 0.01 s" in harness.measure(IMPL, case, "cpu", 1, 2, warmup_s=0.01)["note"]
    shared = ["--backend", "cpu", "--out", "x.csv", "--warmup", "0", "--reps", "1"]
    parser = arg_parser("toy")
    assert parser.parse_args(shared).warmup_s == 0 and parser.parse_args([*shared, "--warmup-s", "1.5"]).warmup_s == 1.5
    with pytest.raises(SystemExit):
        parser.parse_args([*shared, "--warmup-s", "-1"])
    schema = families.FAMILIES["stencil"].schema
    assert "warmup_s" not in schema["required"]
    block = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["stencil"]
    jsonschema.validate({**block, "warmup_s": 1}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**block, "warmup_s": -1}, schema)
