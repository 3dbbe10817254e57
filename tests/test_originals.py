"""The original codes without a GPU: command lines, parsers on output written in each code's printed
format (read from its source; none is its output), the config check, and the runner on fake
executables (tests/originals_fakes.py)."""

import json
import math
import subprocess
import sys

import pandas as pd
import pytest
import scipy.sparse as sp

import originals_fakes as fakes
from membound import families
from membound.run import config as mbconfig
from membound.matrices import csr
from membound.run.measure import ROW_COLUMNS
from membound.originals import check, codes, parsers, problems
from membound.originals.codes import Problem

ST2 = Problem("2d5pt", "star", 2, 1, 3, (10240, 10240), 12)
ST3 = Problem("3d7pt", "star", 3, 1, 3, (512, 512, 512), 12)
BOX49 = Problem("2d49pt", "box", 2, 3, 1, (10240, 10240), 12)

# EBISU 2D: ptx, data size/4, width_x, width_y, iterations, depth, bdim, valid tiling, grid, blocks per
# SM, shared memory, SM range, runtime (ms), GCells/s (its PrintHelper, non-verbose), then --check's lines
EBISU_2D = ("900\t2\t10240\t10240\t12\t3\t256\t250\t<41,3,1>\t1.000/2\t98.008/227.000\t16/15\t2.495000\t504.000000\t\n"
            "Values at index (3,3) differ : 0.500000 and 0.500000\n[Test] Max Error : 1.1e-16 @ (,3,3)\n"
            "[Test] RMS Error : 2.000000e-17\n")
EBISU_3D = "900\t2\t512\t512\t512\t10\t3\t256\t4\t<16,16,2>\t0.970/1\t180.001/227.000\t9/9\t6.316714\t210.000000\t\n"
DASP = ("\n===dc2.mtx===\n\nINIT DONE\ncusparse:  0.0123 ms, 124.6173 Gflop/s, 1234.5678 GB/s, 1300.0000 GB/s\n"
        "SpMV_X:    0.0101 ms, 151.7616 GFlop/s, 1503.0000 GB/s, 1600.0000 GB/s\n\n")


def conv2d(times: int, gstencil: float, shape="star_2d1r") -> str:
    return (f"INFO: shape = {shape}, m = 10240, n = 10240, times = {times}\nConvStencil(2D): \nTime = 3[ms]\n"
            f"GStencil/s = {gstencil:f}\n")


def test_commands_put_each_codes_arguments_in_its_own_order():
    assert codes.commands("ebisu", "/x", ST2) == [["/x", "10240", "10240", "--iter=12", "--warmup", "--check"]]
    assert codes.commands("ebisu", "/x", Problem("3d7pt", "star", 3, 1, 3, (2560, 234, 312), 12))[0][1:4] == \
        ["312", "234", "2560"]                                        # width_x width_y height
    assert codes.commands("convstencil", "/x", ST3) == [["/x", "star3d1r", "512", "512", "512", "4"],
                                                        ["/x", "star3d1r", "512", "512", "512", "8"]]
    assert codes.commands("lorastencil", "/x", BOX49)[0] == ["/x", "box2d3r", "10240", "10240", "12"]
    assert codes.commands("brick", "/x", Problem("3d7pt", "star", 3, 1, 1, (64, 32, 16), 12)) == [["/x", "-d", "16,32,64"]]
    assert codes.commands("babelstream", "/x", Problem("2^20", n=2**20, reps=50)) == \
        [["/x", "-s", "1048576", "-n", "51", "--csv"]]
    assert codes.commands("dasp", "/x", Problem("dc2", matrix="/s/dc2.mtx")) == [["/x", "/s/dc2.mtx"]]


def test_dasp_time_comes_from_its_gflops_and_it_has_no_check():
    dasp, cusparse = parsers.dasp([DASP], Problem("dc2"), nnz=766396)
    assert dasp.seconds == pytest.approx(2 * 766396 / 151.7616e9) and cusparse.seconds == pytest.approx(2 * 766396 / 124.6173e9)
    assert dasp.checked is None and "commented out" in dasp.check and (dasp.warmup, dasp.reps) == (100, 1000)
    assert "sorted row order" in dasp.normalised and "sorted" not in cusparse.normalised
    with pytest.raises(parsers.CheckFailed, match="check against cuSPARSE failed"):
        parsers.dasp([DASP + "error in (3), cusp(1.00), cuda(2.00),please check your code!\n"], Problem("dc2"), 1)
    assert parsers.dasp([DASP + "Y(116835), compute succeed!\n"], Problem("dc2"), 1)[0].checked is True


def test_ebisu_counts_interior_points_and_the_steps_of_its_launches():
    m = parsers.ebisu([EBISU_2D], ST2)[0]
    assert (m.seconds, m.steps, m.depth, m.points, m.checked) == (pytest.approx(2.495e-3), 12, 3, 10238 * 10238, True)
    m3 = parsers.ebisu([EBISU_3D], ST3)[0]      # --iter=10 at depth 3: 4 launches, 12 steps
    assert (m3.steps, m3.points, m3.checked) == (12, 510 ** 3, None)
    assert m3.points * m3.steps / m3.seconds / 1e9 == pytest.approx(210 * 12 / 10)   # it printed 10 steps' worth


def test_ebisu_failed_check_wrong_domain_and_foreign_output_are_errors():
    with pytest.raises(parsers.CheckFailed, match="RMS error 3.0e-03"):
        parsers.ebisu([EBISU_2D.replace("2.000000e-17", "3.0e-03")], ST2)
    with pytest.raises(parsers.ParseError, match="it ran 10240x10240, not 9000x9000"):
        parsers.ebisu([EBISU_2D], Problem("2d5pt", "star", 2, 1, 3, (9000, 9000), 12))
    with pytest.raises(parsers.ParseError, match="no tab-separated result line"):
        parsers.ebisu([DASP], ST2)


def test_convstencil_time_is_the_difference_of_its_two_cold_runs():
    points = 10240 * 10240
    first, second = 0.020 + 4 * 3 * points / 400e9, 0.020 + 8 * 3 * points / 400e9   # 20 ms cold start
    outs = [conv2d(4, points * 4 * 3 / first / 1e9), conv2d(8, points * 8 * 3 / second / 1e9)]
    m = parsers.tc_stencil("convstencil", outs, ST2)[0]
    assert m.steps == 12 and points * m.steps / m.seconds / 1e9 == pytest.approx(400, rel=1e-5)
    assert m.checked is None and "compiled out" in m.check
    with pytest.raises(parsers.ParseError, match="took no longer"):
        parsers.tc_stencil("convstencil", outs[::-1], ST2)


def test_lorastencil_box2d3r_is_one_step_per_launch_whatever_it_prints():
    points = 10240 * 10240
    outs = [f"INFO: shape = box_2d3r, m = 10240, n = 10240, times = {t}\nLoRAStencil(2D box_2d3r): \nTime = 9[ms]\n"
            f"GStencil/s = {points * t * 3 / (0.01 + t * points / 150e9) / 1e9:f}\n" for t in (12, 24)]
    m = parsers.tc_stencil("lorastencil", outs, BOX49)[0]
    assert m.steps == 12 and points * m.steps / m.seconds / 1e9 == pytest.approx(150, rel=1e-5)
    mismatch = outs[0] + "\nChecking Correctness... \nComparing naive and lora\nrow = 5, col = 7, naive = 1.0, lora = 2.0\nCorrect!\n"
    with pytest.raises(parsers.CheckFailed):
        parsers.tc_stencil("lorastencil", [mismatch, outs[1]], BOX49)


def test_brick_takes_its_brick_kernel_time_and_babelstream_its_mul_row():
    out = ("d3pt7 MPI decomp\nArr: 0.004\ncalc [0.001, 0.001, 0.001] (\u03c3: 0)\nperf 33.5 GStencil/s\n\n"
           "Bri: 0.003\ncalc [0.0006, 0.0007, 0.0008] (\u03c3: 0)\nmove [0.002, 0.002, 0.002] (\u03c3: 0)\n"
           "perf 44.7 GStencil/s\n")
    m = parsers.brick([out], Problem("3d7pt", "star", 3, 1, 1, (512, 512, 512), 12))[0]
    assert (m.seconds, m.t_min, m.t_max, m.points) == (pytest.approx(0.0084), pytest.approx(0.0072), pytest.approx(0.0096),
                                                       512 ** 3)
    with pytest.raises(parsers.CheckFailed):
        parsers.brick([out + "result mismatch!\n"], Problem("3d7pt", "star", 3, 1, 1, (512, 512, 512), 12))
    csv = ("function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime\n"
           "Copy,51,1024,8,1.0,1e-06,2e-06,1.5e-06\nMul,51,1024,8,16384.0,1e-06,3e-06,2e-06\n")
    b = parsers.babelstream([csv], Problem("2^10", n=1024, reps=50))[0]
    assert (b.seconds, b.t_min, b.t_max, b.reps, b.precision) == (2e-06, 1e-06, 3e-06, 50, "fp64")


# ------------------------------------------------------------------------------ config


def base_config(originals: dict, problems_switch: str = "ours") -> dict:
    merged, _ = mbconfig.assemble([str(mbconfig.REPO / "profiles" / "cpu" / "membound.yaml")], {}, blocks=families.config_blocks())
    return {**merged, "originals": {"problems": problems_switch, **originals}}


def test_no_originals_no_jobs_and_nothing_to_check():
    config = base_config({})
    check.check(config)
    assert problems.jobs(config, mbconfig.load_matrices()) == []


@pytest.mark.parametrize("entry, message", [
    ({"dasp": {"executable": "/no/such/spmv_double"}},
     "originals.dasp.executable: /no/such/spmv_double does not exist; build DASP by its own instructions"),
    ({"ebisu": {"executables": {"2d7pt": "EXE"}}}, "originals.ebisu.executables.2d7pt: no stencil '2d7pt' in stencil.kernels"),
    ({"brick": {"executables": {"2d5pt": "EXE"}}}, "originals.brick.executables.2d5pt: Brick runs 3D stencils only"),
    ({"babelstream": {"executable": "NOTEXE"}}, "is not an executable file; give the binary the build made"),
])
def test_config_check_names_the_key_and_the_fix(tmp_path, entry, message):
    exe = fakes.write(tmp_path, "ebisu")
    (tmp_path / "plain").write_text("")
    entry = json.loads(json.dumps(entry).replace('"EXE"', json.dumps(exe)).replace('"NOTEXE"', json.dumps(str(tmp_path / "plain"))))
    with pytest.raises(mbconfig.ConfigError, match=message):
        check.check(base_config(entry))


def test_paper_problems_give_each_code_its_table3_domain(tmp_path):
    exe = fakes.write(tmp_path, "ebisu")
    config = base_config({"ebisu": {"executables": {"3d7pt": exe}}, "convstencil": {"executables": {"2d5pt": exe}}}, "paper")
    check.check(config)
    assert problems.problem(config, "ebisu", "3d7pt").domain == (2560, 234, 312)
    assert problems.problem(config, "convstencil", "2d5pt").domain == (10240, 10240)
    ours = base_config({"ebisu": {"executables": {"3d7pt": exe}}})
    assert problems.problem(ours, "ebisu", "3d7pt").domain == tuple(ours["stencil"]["domain_3d"])
    assert problems.jobs(config, []) == [("ebisu", "3d7pt"), ("convstencil", "2d5pt")]


# ------------------------------------------------------------------------------ the runner on fakes


def run(tmp_path, code: str, *args) -> pd.DataFrame:
    out = tmp_path / f"{code}.csv"
    run = subprocess.run([sys.executable, "-m", "membound.originals.run", "--backend", "cpu", "--code", code,
                          "--executable", fakes.write(tmp_path, code), "--scratch", str(tmp_path / "scratch"),
                          "--out", str(out), "--record", str(tmp_path / f"{code}.json"), *args],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (tmp_path / "scratch").exists()
    return pd.read_csv(out)


STENCIL = ["--case", "2d5pt", "--shape", "star", "--dims", "2", "--radius", "1", "--depth", "3", "--domain", "600x400",
           "--steps", "6", "--commit", "9b6183a"]


@pytest.mark.parametrize("code", ["ebisu", "convstencil", "lorastencil"])
def test_runner_writes_rows_at_the_fakes_rate(tmp_path, code):
    rows = run(tmp_path, code, *STENCIL)
    assert list(rows.columns) == ROW_COLUMNS and len(rows) == 1
    row = rows.iloc[0]
    assert row["impl"] == f"{code}_original" and row["code"] == f"fake_{code}@9b6183a" and row["steps"] == 6
    assert row["value"] == pytest.approx(fakes.RATE, rel=1e-3) and row["metric"] == "GStencil/s"
    assert row["note"].startswith("checked: " if code == "ebisu" else "unchecked: ")
    record = json.loads((tmp_path / f"{code}.json").read_text())
    assert record["commit"] == "9b6183a" and len(record["sha256"]) == 64
    assert [c.split()[-1] for c in record["commands"]] == (["--check"] if code == "ebisu" else ["2", "4"])  # launches


def test_runner_gives_dasp_a_matrix_market_file_of_the_csr_and_writes_both_sides(tmp_path):
    matrix = sp.random(500, 400, density=0.01, format="csr", random_state=3)
    matrix.data[:3] = 0.0                                                   # explicit zeros count as entries
    csr.save(tmp_path / "m.npz", matrix, {"code": "D7", "name": "cop20k_A", "source": "surrogate"})
    rows = run(tmp_path, "dasp", "--case", "cop20k_A", "--matrix", str(tmp_path / "m.npz"))
    assert list(rows["impl"]) == ["dasp_original", "cusparse_dasp_original"] and set(rows["code"]) == {"D7"}
    assert list(rows["value"]) == pytest.approx([fakes.RATE, fakes.RATE / 2]) and (rows["nnz"] == matrix.nnz).all()
    assert list(rows["unit"]) == ["tensor_core", "cuda_core"] and list(rows["role"]) == ["DASP", "cuSPARSE"]


def test_runner_fails_with_one_line_and_no_rows_on_a_failed_check(tmp_path):
    body = fakes.FAKES["ebisu"].replace("[Test] RMS Error : 0.000000e+00", "[Test] RMS Error : 1.0e-02")
    exe = fakes.write(tmp_path, "ebisu", body)
    out = tmp_path / "rows.csv"
    run = subprocess.run([sys.executable, "-m", "membound.originals.run", "--backend", "cpu", "--code", "ebisu",
                          "--executable", exe, "--scratch", str(tmp_path / "s"), "--out", str(out),
                          "--record", str(tmp_path / "r.json"), *STENCIL], capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and not out.exists()
    assert run.stderr.strip().splitlines()[-1] == ("error: EBISU 2d5pt: RMS error 1.0e-02 against its CPU reference "
                                                   "(tolerance 1e-05)")


def test_brick_and_babelstream_rows(tmp_path):
    brick = run(tmp_path, "brick", "--case", "3d7pt", "--shape", "star", "--dims", "3", "--radius", "1", "--depth", "1",
                "--domain", "32x48x64", "--steps", "6").iloc[0]
    assert brick["n"] == 32 * 48 * 64 and brick["value"] == pytest.approx(fakes.RATE) and brick["depth"] == 1
    stream = run(tmp_path, "babelstream", "--case", "2^12", "--n", "4096", "--reps", "5").iloc[0]
    assert (stream["problem"], stream["kernel"], stream["role"]) == ("n=2^12", "scale", "STREAM")
    assert stream["value"] == pytest.approx(fakes.RATE) and math.isclose(stream["reps"], 5)
