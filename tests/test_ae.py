"""Table 3, the appendix's run times and text, and the manifest (checked with sha256sum -c)."""

import pandas as pd

from membound import measure, table3

STENCILS = {"2d5pt": {"shape": "star", "dims": 2, "radius": 1, "depth": 3},
            "3d27pt": {"shape": "box", "dims": 3, "radius": 1, "depth": 3}}
ROLES = (("cc_naive", "cuda_core", "Brick"), ("cc_tb", "cuda_core", "EBISU"), ("tc", "tensor_core", "ConvStencil"))
RUN = {"device": "NVIDIA H100 80GB HBM3", "host": "gpu1", "date": "2026-01-02T03:04:05Z"}


def stencil_rows(name, domain, depth, t_tc=1.2):
    return [{"kernel": "stencil", "impl": impl, "unit": unit, "role": role, "problem": name, "domain": domain,
             "depth": 1 if role == "Brick" else depth, "steps": 12, "n": 1000, "source": "synthetic",
             "t_median_s": t_tc if unit == "tensor_core" else 1.0, **RUN} for impl, unit, role in ROLES]


def rows(*groups):
    return pd.DataFrame([r for g in groups for r in g]).reindex(columns=measure.ROW_COLUMNS)


def test_table3_reads_what_ran_and_names_the_differences(tmp_path):
    raw = rows(stencil_rows("2d5pt", "10240x10240", 3), stencil_rows("3d27pt", "512x512x512", 3))
    t = table3.table(raw, STENCILS).set_index("stencil")
    assert t.loc["2d5pt", "K"] == 5 and t.loc["3d27pt", "K"] == 27
    assert t.loc["2d5pt", "ConvStencil"] == "10240x10240 (3)" == t.loc["2d5pt", "ConvStencil (paper)"]
    assert t.loc["2d5pt", "Brick (paper)"] == "-" and t.loc["3d27pt", "Brick"] == "512x512x512 (1)"
    assert t.loc["3d27pt", "EBISU (paper)"] == "234x312x2560 (3)" and t.loc["2d5pt", "steps"] == "12"
    diffs = table3.differences(table3.runs(raw, STENCILS))
    assert "ConvStencil ran 512x512x512 (paper 1024x1024x1024)" in diffs
    assert "EBISU ran 10240x10240 (paper 9000x9000) and 512x512x512 (paper 234x312x2560)" in diffs
    assert "Brick also ran 2d5pt (not in the paper)" in diffs
    table3.write(raw, STENCILS, tmp_path / "t.csv", tmp_path / "t.md", "NVIDIA H100")
    md = (tmp_path / "t.md").read_text()
    assert md.startswith("# Table 3: the stencils and the domains (depth) run on NVIDIA H100")
    assert "Brick also ran 2d5pt" in md and len(pd.read_csv(tmp_path / "t.csv")) == 2


def test_table3_marks_a_stencil_that_did_not_run():
    t = table3.table(rows(stencil_rows("2d5pt", "64x64", 3)), STENCILS).set_index("stencil")
    assert t.loc["3d27pt", "ConvStencil"] == "-"
    assert "ConvStencil did not run 3d27pt" in table3.differences(table3.runs(rows(stencil_rows("2d5pt", "64x64", 3)), STENCILS))
