"""tools/sweep_depths.py: its tile variants launch, the entries it prints and writes are the tuned
tiles' own YAML (kernels/stencil/tuned/<gpu>.yaml), and its depth sweep runs checked rows (on the CPU)."""

import contextlib
import importlib.util
from argparse import Namespace
from pathlib import Path

import pandas as pd
import pytest

from membound.kernels.stencil import launch as P
from membound.kernels.stencil import tiles
from membound.kernels.stencil.tiles import TUNED

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("sweep_depths", REPO / "tools" / "sweep_depths.py")
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)


@pytest.mark.parametrize("elem", [8, 4, 2])
@pytest.mark.parametrize("gpu", [None, "h100", "h200"])
def test_every_variant_is_distinct_and_has_a_launch(gpu, elem):
    for st in sweep.stencils():
        for depth in range(1, P.MAX_DEPTH[st.dims] + 1):
            tiles = sweep.variants(st, depth, gpu, elem)
            assert P.cc_tile(st, depth, gpu, elem) in tiles.values() and sweep.today(st, depth) in tiles.values()
            assert len({tuple(sorted(t.items())) for t in tiles.values()}) == len(tiles) >= 4
            for tile in tiles.values():
                assert P.cc_launch(st, depth, tile=tile, elem=elem).smem > 0
                assert tile.get("VEC") or not tile.get("VS")   # vector strips need the 16-byte copies
                assert sweep.tile_of(sweep.tile_text(tile)) == tile


@pytest.mark.parametrize("gpu", sorted(TUNED))
def test_the_printed_entries_are_the_tuned_files_lines(gpu):
    """Each entry of tuned/<gpu>.yaml, made and printed as the sweep makes and prints it from its tile's
    text, is that line of the file (paste-able; --apply writes the same)."""
    path = tiles.TUNED_DIR / f"{gpu}.yaml"
    lines = [line.removeprefix("  - ") for line in path.read_text().splitlines() if line.startswith("  - ")]
    names = {(st.dims, st.shape, st.radius): st for st in sweep.stencils()}
    assert len(lines) == len(TUNED[gpu])
    for line, entry in zip(lines, tiles.read(path)):
        dims, shape, radius, depth, *elem = tiles.key_of(entry)
        tile = TUNED[gpu][tiles.key_of(entry)]
        assert sweep.entry_text(sweep.entry_of(names[dims, shape, radius], depth, sweep.tile_text(tile), *elem,
                                               note=entry["note"])) == line


def test_depth_sweep_on_the_cpu_checks_every_depth():
    args = Namespace(steps=3, warmup=0, reps=1)
    rows, notes = sweep.sweep_depths(sweep.stencils(["2d9pt", "3d7pt"]), [1, 2, 3, 9], args, "cpu",
                                     {2: (21, 17), 3: (9, 8, 7)})
    assert notes == [] and all(r["rel_err"] < 1e-10 for r in rows)
    assert [(r["problem"], r["impl"], r["depth"], r["steps"]) for r in rows] == [
        (name, impl, t, {1: 3, 2: 4, 3: 3}[t]) for name in ("2d9pt", "3d7pt")
        for impl in P.SWEPT if impl != "tc_sparse" for t in (1, 2, 3)]            # tc_sparse: no fp64


def test_tile_sweep_keeps_the_best_checked_variant_and_prints_its_entry(monkeypatch, tmp_path, capsys):
    """The tile sweep's bookkeeping (no GPU: compiling and measuring faked): a refused and a failed
    variant are kept out of the best, which is printed as an entry; a failed check fails the run."""
    from membound.run.measure import CheckError

    class Serial:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        map = staticmethod(map)

    def fake_measured(impl, at, steps, backend, warmup, reps, domain, rng, tile, precision):
        if tile.get("PF") == 2:
            raise CheckError("2d5pt cc_tb: mismatch")
        return {"problem": at.name, "depth": at.depth, "value": tile.get("NT", 100) + 10 * tile.get("CH", 0) + at.depth}

    monkeypatch.setattr(sweep, "ProcessPoolExecutor", Serial)
    monkeypatch.setattr(sweep, "compile_launch", lambda job: "needs 300 KiB" if job[2].get("NT") == 512 else None)
    monkeypatch.setattr(sweep, "measured", fake_measured)
    monkeypatch.setattr(sweep.S, "device_gpu", lambda: "a100")
    monkeypatch.setattr(sweep.S, "_shared_limit", lambda backend: 227 * 1024)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert sweep.main(["--tiles", "--stencils", "2d5pt", "--depths", "2", "9"]) == 1
    best = pd.read_csv(tmp_path / "best_tiles.csv")
    assert list(zip(best.depth, best.variant, best.value)) == [(2, "ch8", 338)]
    frame = pd.read_csv(tmp_path / "sweep_tiles.csv", keep_default_na=False)
    assert set(frame.failed) == {"", "needs 300 KiB", "FAILED 2d5pt cc_tb: mismatch"}
    assert any("{dims: 2, shape: star, radius: 1, depth: 2, tile: {kernel: stencil_tb2, CH: 8}" in line
               for line in capsys.readouterr().out.splitlines())
    assert {"{kernel: stencil_cc}", "{kernel: stencil_cc, VEC: 1}"} <= set(frame.tile)   # with and without 16-byte copies


def test_tile_sweep_runs_each_precision_and_only_the_variants_named(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(sweep, "compile_launch", lambda job: seen.append(job[4]))
    monkeypatch.setattr(sweep, "ProcessPoolExecutor", lambda *a, **k: contextlib.nullcontext(
        type("Serial", (), {"map": staticmethod(lambda f, jobs: [f(j) for j in jobs])})))
    monkeypatch.setattr(sweep, "measured", lambda *a: {"value": 100.0 + len(a[-1]) + 10 * a[-2].get("VEC", 0)})
    monkeypatch.setattr(sweep.S, "device_gpu", lambda: "a100")   # no TUNED tiles: today's differ from the GPU's
    monkeypatch.setattr(sweep.S, "_shared_limit", lambda backend: 227 * 1024)
    monkeypatch.setenv("OUT", str(tmp_path))
    assert sweep.main(["--tiles", "--stencils", "2d5pt", "--depths", "1", "--precisions", "fp16", "fp64",
                       "--variants", "today", "today+vec"]) == 0
    assert seen == [2, 2, 8, 8]    # element bytes per compiled variant
    best = pd.read_csv(tmp_path / "best_tiles.csv")
    assert list(zip(best.precision, best.variant)) == [("fp16", "today+vec"), ("fp64", "today+vec")]


def test_improvements_follow_tuneds_rule_and_apply_writes_them_into_the_gpus_file(tmp_path):
    """A variant >= 3% faster than the tile the GPU runs today is found (a failed or a 2% faster one is
    not); applied, tuned/h200.yaml gets it over the entry of its key, with a note of its gain, and every
    other entry is left as it was."""
    st = {s.name: s for s in sweep.stencils()}
    today = {name: sweep.tile_text(P.cc_tile(st[name], 1, "h200", 2)) for name in ("2d5pt", "2d9pt")}
    faster = "{kernel: stencil_cc, BX: 128, VEC: 1}"
    frame = pd.DataFrame([("2d5pt", today["2d5pt"], 100.0, ""), ("2d5pt", faster, 104.0, ""),
                          ("2d9pt", today["2d9pt"], 100.0, ""), ("2d9pt", faster, 102.0, ""),
                          ("2d9pt", "{kernel: stencil_cc, BX: 256, VEC: 1}", 999.0, "FAILED mismatch")],
                         columns=["problem", "tile", "value", "failed"]).assign(depth=1, precision="fp16", variant="v")
    found = sweep.improvements(frame, "h200")
    assert list(zip(found.problem, found.before, found.value)) == [("2d5pt", 100.0, 104.0)]
    path = tmp_path / "h200.yaml"
    path.write_text((tiles.TUNED_DIR / "h200.yaml").read_text())
    sweep.apply_improvements(found, "h200", path)
    got = tiles.load(path)
    assert got[(2, "star", 1, 1, 2)] == dict(tiles.CC2, BX=128, VEC=1)
    assert {k: v for k, v in got.items() if k != (2, "star", 1, 1, 2)} == \
        {k: v for k, v in TUNED["h200"].items() if k != (2, "star", 1, 1, 2)}
    assert "fp16: 100.0 -> 104.0 GStencil/s (tools/sweep_depths.py --tiles --apply" in path.read_text()


def test_help_prints(capsys):
    """--help renders every option's help (a bare % in one made argparse raise instead)."""
    with pytest.raises(SystemExit) as done:
        sweep.main(["--help"])
    assert done.value.code == 0 and "--apply" in capsys.readouterr().out
