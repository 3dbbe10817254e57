"""One test per equation of the model, on the papers' own worked numbers (paper 000 and 002)."""

import pytest

from membound.model import equations as m

A100 = {"cc": 9.7e12, "tc": 19.5e12, "bw": 1.94e12}   # paper 000, Table 1
GH200 = {"cc": 34.0e12, "tc": 67.0e12, "bw": 4.00e12}


def test_eq1_machine_balance_a100():
    assert m.machine_balance(A100["cc"], A100["bw"]) == pytest.approx(5.0)


def test_eq2_intensity():
    assert m.intensity(54, 16) == pytest.approx(3.375)


def test_eq3_roofline_memory_and_compute_side():
    assert m.roofline(A100["cc"], A100["bw"], 1 / 16) == pytest.approx(1.94e12 / 16)
    assert m.roofline(A100["cc"], A100["bw"], 100) == A100["cc"]


def test_eq4_bound_classification():
    balance = m.machine_balance(A100["cc"], A100["bw"])
    assert m.is_memory_bound(5 / 8, balance)            # 2d5pt
    assert not m.is_memory_bound(6.125, balance)        # Box-2D3R, paper 002 Table 3 case 2


def test_sec31_scale_intensity_is_one_sixteenth():
    w, q = m.scale_wq(1000)
    assert (w, q) == (1000, 16000)
    assert m.intensity(w, q) == pytest.approx(1 / 16)


def test_eq7_gemv_intensity_tends_to_one_quarter():
    w, q = m.gemv_wq(3, 5)
    assert (w, q) == (30, (15 + 3 + 5) * 8)
    assert m.intensity(*m.gemv_wq(20000, 20000)) == pytest.approx(1 / 4, rel=1e-3)


def test_eq9_spmv_general_traffic():
    w, q = m.spmv_wq(10, 20, 50, index_traffic=123, packed_traffic=7)
    assert (w, q) == (100, (50 + 10 + 20) * 8 + 130)


def test_eq10_csr_intensity_tends_to_one_sixth():
    w, q = m.csr_wq(100, 100, 1000)
    assert (w, q) == (2000, 1200 * 8 + 1101 * 4)
    assert m.intensity(*m.csr_wq(10**6, 10**6, 10**10)) == pytest.approx(1 / 6, rel=1e-3)


def test_eq12_2d5pt_intensity_is_five_eighths():
    w, q = m.stencil_wq(1, m.stencil_points("star", 2, 1))
    assert (w, q) == (10, 16)
    assert m.intensity(w, q) == pytest.approx(5 / 8)


def test_eq13_temporal_blocking_multiplies_work():
    assert m.stencil_wq(7, 5, t=3) == (7 * 30, 7 * 16)


def test_eq14_gh200_2d5pt_needs_depth_above_15_98():
    assert m.depth_for_compute_bound(0.625, 9.99) == pytest.approx(15.984)     # the paper's B = 9.99


def test_eq14_with_table1s_gh200_balance():
    """Paper 000 Table 1 gives the GH200 34.0 TFLOP/s and 4.00 TB/s: B = 8.5, so t > 13.6, not the
    15.98 of eq. 14's text (which uses B = 9.99; config/gpus/gh200.yaml's note says so)."""
    balance = m.machine_balance(GH200["cc"], GH200["bw"])
    assert balance == pytest.approx(8.5)
    assert m.depth_for_compute_bound(0.625, balance) == pytest.approx(13.6)


def test_eq15_16_time_ratio_is_balance_over_intensity():
    assert m.mem_to_cmp_ratio(5.0, 1 / 16) == pytest.approx(80.0)
    assert m.mem_to_cmp_ratio(5.0, 1 / 16) > 1


def test_eq17_18_overlapped_and_unoverlapped_time():
    assert m.overlapped_time(3.0, 1.0, 0.5) == 3.0
    assert m.unoverlapped_time(3.0, 1.0, 0.5) == 4.5


def test_eq19_20_speedup_matches_the_time_ratio():
    t_mem, t_cmp, t_oth, a = 2.0, 1.0, 0.5, 2.0
    direct = (t_cmp + t_mem + t_oth) / (t_cmp / a + t_mem + t_oth)      # eq. 19
    assert m.tc_speedup(a, t_mem, t_cmp, t_oth) == pytest.approx(direct)  # eq. 20


def test_eq21_22_bound_is_the_speedup_without_other_time():
    a, balance, i = 2.0, 5.0, 0.25
    t_cmp = 1.0
    exact = m.tc_speedup(a, t_mem=t_cmp * balance / i, t_cmp_cc=t_cmp)   # eq. 21 with T_others = 0
    assert m.tc_speedup_bound(a, balance, i) == pytest.approx(exact)
    assert m.tc_speedup(a, t_cmp * balance / i, t_cmp, t_others=0.1) < m.tc_speedup_bound(a, balance, i)


def test_eq23_bound_is_1_33_at_alpha_2_and_2_at_infinity():
    assert m.tc_upper_bound(2) == pytest.approx(4 / 3)
    assert round(m.tc_upper_bound(2), 2) == 1.33
    assert m.tc_upper_bound(1e12) == pytest.approx(2.0)
    assert m.tc_speedup_bound(2, 1.0, 1.0) == pytest.approx(m.tc_upper_bound(2))   # T_cmp -> T_mem


def test_eq24_a100_gemv_workload_bound_is_1_05():
    balance = m.machine_balance(A100["cc"], A100["bw"])
    assert m.workload_bound(0.25, balance) == pytest.approx(1.05)


def test_sec51_tensor_core_scale_ceilings():
    assert m.tc_scale_ceiling(A100["tc"], (8, 8, 4)) / 1e12 == pytest.approx(2.4, abs=0.05)
    assert m.tc_scale_ceiling(GH200["tc"], (8, 8, 4)) / 1e12 == pytest.approx(8.37, abs=0.01)


@pytest.mark.parametrize("shape,dims,radius,k", [
    ("star", 2, 1, 5), ("box", 2, 1, 9), ("star", 2, 3, 13), ("box", 2, 3, 49),
    ("star", 3, 1, 7), ("box", 3, 1, 27)])
def test_stencil_points_of_the_six_benchmarks(shape, dims, radius, k):
    assert m.stencil_points(shape, dims, radius) == k


@pytest.mark.parametrize("dims,radius,t", [(2, 1, 3), (2, 1, 7), (2, 3, 1), (3, 1, 3), (2, 7, 1)])
def test_eq10_box_fusion_matches_closed_form(dims, radius, t):
    closed = (2 * radius * t + 1) ** dims / (t * (2 * radius + 1) ** dims)
    assert m.fusion_redundancy("box", dims, radius, t) == pytest.approx(closed)


def test_eq9_star_fusion_counts_the_diamond():
    assert m.fused_points("star", 2, 1, 3) == 2 * 3**2 + 2 * 3 + 1      # L1 ball of radius 3


# Paper 002, Table 2: (pattern, t, D, S, alpha, C, M, I) for every analytical cell.
TABLE2 = [
    ("EBISU Box-2D1R t3 double", 1, 3, 8, None, None, 54, 16, 3.38),
    ("EBISU Box-2D3R t1 double", 3, 1, 8, None, None, 98, 16, 6.12),
    ("EBISU Box-2D1R t7 float", 1, 7, 4, None, None, 126, 8, 15.75),
    ("EBISU Box-2D7R t1 float", 7, 1, 4, None, None, 450, 8, 56.25),
    ("ConvStencil Box-2D1R t3 double", 1, 3, 8, 0.5, 1.81, 196, 16, 12.25),
    ("ConvStencil Box-2D3R t1 double", 3, 1, 8, 0.5, 1.0, None, None, None),
    ("ConvStencil Box-2D1R t7 float", 1, 7, 4, 0.5, 3.57, 900, 8, 112.50),
    ("ConvStencil Box-2D7R t1 float", 7, 1, 4, 0.5, 1.0, None, None, None),
    ("SPIDER Box-2D1R t7 float", 1, 7, 4, 15 / 32, 3.57, 960, 8, 120.00),
    ("SPIDER Box-2D7R t1 float", 7, 1, 4, 15 / 32, 1.0, None, None, None),
]


@pytest.mark.parametrize("case,radius,t,d,s,alpha,c,mem,i", TABLE2, ids=[row[0] for row in TABLE2])
def test_paper002_table2_analytical_cells(case, radius, t, d, s, alpha, c, mem, i):
    k = m.stencil_points("box", 2, radius)
    if s is None:                                     # CUDA cores, eq. 8
        got = m.stencil_cc(k, t, d)
    else:                                             # tensor cores, eq. 9-12
        a = m.fusion_redundancy("box", 2, radius, t)
        assert a == pytest.approx(alpha, abs=0.005)
        got = m.stencil_tc(k, t, a, s, d)
    if c is not None:
        assert got[0] == pytest.approx(c, abs=0.5)
        assert got[1] == mem
        assert got[2] == pytest.approx(i, abs=0.005)


# Paper 002, Table 3: the scenario of each representative case (ridge points 5/10 for double on the
# A100, 10/161 for float with SPIDER's sparse tensor cores).
@pytest.mark.parametrize("dims,radius,t,d,s,ridges,expected", [
    (2, 1, 3, 8, 0.5, (5, 10), 2),        # case 1
    (2, 3, 1, 8, 0.5, (5, 10), 4),        # case 2
    (2, 1, 7, 4, 15 / 32, (10, 161), 3),  # case 3
    (2, 7, 1, 4, 15 / 32, (10, 161), 3),  # case 4
    (3, 1, 3, 8, 0.5, (5, 10), 4),        # case 5
    (3, 1, 7, 4, 0.47, (10, 161), 4),     # case 6 (SPIDER, S = 0.47 as its I_TC = 1795.21 implies)
])
def test_paper002_table3_scenarios(dims, radius, t, d, s, ridges, expected):
    bw = 1.94e12
    k = m.stencil_points("box", dims, radius)
    a = m.fusion_redundancy("box", dims, radius, t)
    assert m.scenario(ridges[0] * bw, ridges[1] * bw, bw, k, t, a, s, d) == expected


def test_paper002_table3_case5_intensities():
    k, a = 27, m.fusion_redundancy("box", 3, 1, 3)
    assert m.stencil_cc(k, 3)[2] == pytest.approx(10.13, abs=0.0051)
    assert m.stencil_tc(k, 3, a, 0.5)[2] == pytest.approx(85.75)


def test_paper002_table3_case6_intensities():
    k, a = 27, m.fusion_redundancy("box", 3, 1, 7)
    assert m.stencil_cc(k, 7, d=4)[2] == pytest.approx(47.25)
    assert m.stencil_tc(k, 7, a, 0.47, d=4)[2] == pytest.approx(1795.21, abs=0.005)


def test_eq14_scenario1_speedup_is_one():
    bw = 1.94e12
    assert m.stencil_tc_speedup(1e18, 1e18, bw, 5, 1, 1.0, 0.5) == pytest.approx(1.0)


def test_eq16_scenario2_tensor_cores_lose():
    k, a = 9, m.fusion_redundancy("box", 2, 1, 3)
    assert m.stencil_tc_speedup(A100["cc"], A100["tc"], A100["bw"], k, 3, a, 0.5) < 1


def test_eq19_sweet_spot_case5_is_outside():
    a = m.fusion_redundancy("box", 3, 1, 3)
    assert not m.sweet_spot(A100["cc"], A100["tc"], a, 0.5)
    assert m.sweet_spot(A100["cc"], A100["tc"] * 10, a, 0.5)
