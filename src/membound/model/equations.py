"""The analytical model: the equations of paper 000 (Zhang et al., GPGPU '25) and of paper 002
(Gu et al., "Do We Need Tensor Cores for Stencil Computations?").

Units: W in FLOPs, Q in bytes, I in FLOP/byte, P in FLOP/s, B in byte/s, times in seconds; D is the
data size in bytes (8 for FP64, 4 for FP32, 2 for FP16: every D argument takes the row's precision).
In another precision the equations hold with that precision's D and peaks (membound.model.peaks): alpha
of eq. 19-23 is its P_TC / P_CC, and Sec. 5.1's ceiling takes its MMA shape. The two papers both write alpha for different things: paper 000's
alpha is the tensor-core to CUDA-core peak ratio (`peak_ratio` here), paper 002's alpha the fusion
redundancy (`fusion_redundancy`). Each function names its equation.
"""

from __future__ import annotations

import itertools

from membound import kept

D_FP64 = 8
INDEX_BYTES = 4

# ---------------------------------------------------------------------------------- paper 000


def machine_balance(peak: float, bandwidth: float) -> float:
    """Machine balance B = P / B_w (paper 000, eq. 1)."""
    return peak / bandwidth


def intensity(work: float, traffic: float) -> float:
    """Operational intensity I = W / Q (paper 000, eq. 2)."""
    return work / traffic


def roofline(peak: float, bandwidth: float, i: float) -> float:
    """Attainable performance P = min(P_peak, B x I) (paper 000, eq. 3; paper 002, eq. 5)."""
    return min(peak, bandwidth * i)


def is_memory_bound(i: float, balance: float) -> bool:
    """True when I < B (memory-bound), False when I > B (compute-bound) (paper 000, eq. 4)."""
    return i < balance


def scale_wq(n: int, d: int = D_FP64) -> tuple[int, int]:
    """W and Q of SCALE a = q b over n elements: W = n, Q = 2 D n, I = 1/16 (paper 000, Sec. 3.1, eq. 5)."""
    return n, 2 * d * n


def gemv_wq(m: int, n: int, d: int = D_FP64) -> tuple[int, int]:
    """W = 2mn, Q = (mn + m + n) D of dense y = A x, so I -> 2/D = 1/4 (paper 000, eq. 6-7)."""
    return 2 * m * n, (m * n + m + n) * d


def spmv_wq(m: int, n: int, nnz: int, index_traffic: float, packed_traffic: float = 0.0,
            d: int = D_FP64) -> tuple[int, float]:
    """W = 2 nnz, Q = (nnz + m + n) D + alpha_I + beta_Z of SpMV in any format (paper 000, eq. 9).

    `index_traffic` is the coordinate-information bytes (alpha I), `packed_traffic` the packed-value
    bytes (beta Z).
    """
    return 2 * nnz, (nnz + m + n) * d + index_traffic + packed_traffic


def csr_wq(m: int, n: int, nnz: int, d: int = D_FP64, index: int = INDEX_BYTES) -> tuple[int, float]:
    """W = 2 nnz, Q = (nnz + m + n) D + (nnz + m + 1) I_b of CSR SpMV; I ~ 2/(D + I_b) = 1/6 (paper 000, eq. 10)."""
    return spmv_wq(m, n, nnz, index_traffic=(nnz + m + 1) * index, d=d)


def stencil_wq(points: int, k: int, t: int = 1, d: int = D_FP64) -> tuple[int, int]:
    """W_t = t x 2|S| and Q = 2D per point, so I_t = t |S| / D (paper 000, eq. 12-13), over `points` points.

    `k` is |S|, the number of points of the stencil; t = 1 is eq. 12, t > 1 temporal blocking (eq. 13).
    """
    return points * t * 2 * k, points * 2 * d


def depth_for_compute_bound(i_one_step: float, balance: float) -> float:
    """The temporal depth t above which t x I > B makes a stencil compute-bound (paper 000, eq. 14)."""
    return balance / i_one_step


def mem_to_cmp_ratio(balance: float, i: float) -> float:
    """T_mem / T_cmp = (Q/B)/(W/P) = B / I (paper 000, eq. 15); > 1 for memory-bound kernels (eq. 16)."""
    return balance / i


def overlapped_time(t_mem: float, t_cmp: float, t_others: float = 0.0) -> float:
    """T = max(T_mem, T_cmp, T_others) for fully overlapped kernels (paper 000, eq. 17)."""
    return max(t_mem, t_cmp, t_others)


def unoverlapped_time(t_mem: float, t_cmp: float, t_others: float = 0.0) -> float:
    """T = T_mem + T_cmp + T_others for fully un-overlapped kernels (paper 000, eq. 18)."""
    return t_mem + t_cmp + t_others


def tc_speedup(peak_ratio: float, t_mem: float, t_cmp_cc: float, t_others: float = 0.0) -> float:
    """Un-overlapped tensor-core speedup T(CC)/T(TC) when TC computes peak_ratio times faster (paper 000, eq. 19-20)."""
    return 1 + (peak_ratio - 1) / (1 + peak_ratio * (t_mem + t_others) / t_cmp_cc)


def tc_speedup_bound(peak_ratio: float, balance: float, i: float) -> float:
    """Upper bound 1 + (a - 1)/(1 + a B/I) of the un-overlapped speedup, T_others >= 0 (paper 000, eq. 21-22)."""
    return 1 + (peak_ratio - 1) / (1 + peak_ratio * balance / i)


def tc_upper_bound(peak_ratio: float) -> float:
    """Tensor-core upper bound 2 - 2/(1 + alpha) for memory-bound kernels, T_cmp -> T_mem (paper 000, eq. 23)."""
    return 2 - 2 / (1 + peak_ratio)


def workload_bound(i: float, balance: float) -> float:
    """Workload upper bound 1 + I/B of the speedup as alpha -> infinity (paper 000, eq. 24)."""
    return 1 + i / balance


def scale_mma_elements(mma_shape: tuple[int, int, int]) -> int:
    """Elements one MMA D = A B (A m x k, B k x n) scales in tensor-core SCALE (paper 000, Sec. 5.1,
    generalised to any shape): max(m min(k, n), n min(k, m)).

    Derivation: put the data in A and let B = q P, P a k x n partial permutation (at most one 1 per
    row and per column, min(k, n) ones): D's columns are q times min(k, n) distinct columns of A, so
    one MMA scales m min(k, n) elements; with the data in B and A = q P (m x k) it scales n min(k, m).
    The better orientation is taken. Examples: m8n8k4 (FP64) 32, m16n8k8 (TF32) 128, m16n8k16 (FP16) 128.
    """
    m, n, k = mma_shape
    return max(m * min(k, n), n * min(k, m))


def scale_mma_fraction(mma_shape: tuple[int, int, int]) -> float:
    """The fraction of an MMA's m n k multiply-adds that SCALE uses: scale_mma_elements / (m n k)
    (paper 000, Sec. 5.1). m8n8k4: 32/256 = 1/8, m16n8k8: 128/1024 = 1/8, m16n8k16: 128/2048 = 1/16.
    The paper's 1/max(m, n) is the special case m = n >= k, where the fraction is k m / (m m k) = 1/m
    (its 8x4 FP64 tiles of the A100 and H100)."""
    m, n, k = mma_shape
    return scale_mma_elements(mma_shape) / (m * n * k)


def tc_scale_ceiling(tc_peak: float, mma_shape: tuple[int, int, int]) -> float:
    """Tensor-core SCALE ceiling: A = B(qI) uses scale_mma_fraction of the MMA peak, P_TC/8 for
    m8n8k4 (paper 000, Sec. 5.1: 1/max(m, n))."""
    return tc_peak * scale_mma_fraction(mma_shape)


# ---------------------------------------------------------------------------------- paper 002


def _offsets(shape: str, dims: int, radius: int) -> frozenset[tuple[int, ...]]:
    """The offsets of a star (axis-aligned cross) or box stencil of dimension `dims` and radius `radius`."""
    if shape == "box":
        return frozenset(itertools.product(range(-radius, radius + 1), repeat=dims))
    if shape == "star":
        origin = (0,) * dims
        arms = {tuple(s if a == axis else 0 for a in range(dims))
                for axis in range(dims) for s in range(-radius, radius + 1)}
        return frozenset(arms | {origin})
    raise ValueError(f"unknown stencil shape '{shape}': use star or box")


def stencil_points(shape: str, dims: int, radius: int) -> int:
    """K, the points of the stencil: (2r+1)^d for a box, 2dr + 1 for a star (paper 002, Sec. 3.2.1)."""
    return len(_offsets(shape, dims, radius))


@kept.on_disk("fused-points")
def fused_points(shape: str, dims: int, radius: int, t: int) -> int:
    """K^(t), the points of the stencil fused over t steps: the t-fold Minkowski sum of its offsets
    (paper 002, Sec. 3.2.3; for a box this is (2rt + 1)^d, eq. 10)."""
    base = _offsets(shape, dims, radius)
    fused = {(0,) * dims}
    for _ in range(t):
        fused = {tuple(a + b for a, b in zip(p, q)) for p in fused for q in base}
    return len(fused)


def fusion_redundancy(shape: str, dims: int, radius: int, t: int) -> float:
    """alpha = K^(t) / (t K), the fusion redundancy (paper 002, eq. 9; box form eq. 10)."""
    return fused_points(shape, dims, radius, t) / (t * stencil_points(shape, dims, radius))


def stencil_cc(k: int, t: int, d: int = D_FP64) -> tuple[int, int, float]:
    """C, M, I per output point on CUDA cores with temporal fusion t: C = 2tK, M = 2D, I = tK/D (paper 002, eq. 6-8)."""
    c, m = 2 * t * k, 2 * d
    return c, m, c / m


def stencil_tc(k: int, t: int, alpha: float, sparsity: float, d: int = D_FP64) -> tuple[float, int, float]:
    """C_TC = (alpha/S) 2tK, M = 2D, I_TC = t (alpha/S) K/D per output point on tensor cores (paper 002, eq. 3, 11-12)."""
    c = alpha / sparsity * 2 * t * k
    m = 2 * d
    return c, m, c / m


def tc_actual_perf(tc_peak: float, bandwidth: float, i_tc: float, alpha: float, sparsity: float) -> float:
    """P_TC,actual = (S/alpha) min(P_TC, B I_TC): tensor-core performance in useful FLOP/s (paper 002, eq. 12)."""
    return sparsity / alpha * roofline(tc_peak, bandwidth, i_tc)


def stencil_tc_speedup(cc_peak: float, tc_peak: float, bandwidth: float, k: int, t: int,
                       alpha: float, sparsity: float, d: int = D_FP64) -> float:
    """P_TC,actual / P_CU,actual, the modelled tensor-core speedup of a stencil (paper 002, eq. 13)."""
    _, _, i_cc = stencil_cc(k, t, d)
    _, _, i_tc = stencil_tc(k, t, alpha, sparsity, d)
    return tc_actual_perf(tc_peak, bandwidth, i_tc, alpha, sparsity) / roofline(cc_peak, bandwidth, i_cc)


def scenario(cc_peak: float, tc_peak: float, bandwidth: float, k: int, t: int,
             alpha: float, sparsity: float, d: int = D_FP64) -> int:
    """Which of paper 002's four scenarios (eq. 14-19) a stencil falls in.

    1: memory-bound on both units (speedup 1, eq. 14); 2: memory-bound on CUDA cores, compute-bound
    on tensor cores (speedup < 1, eq. 15-16); 3: compute-bound on CUDA cores, memory-bound on tensor
    cores (speedup > 1, eq. 17); 4: compute-bound on both (speedup S P_TC/(alpha P_CU), > 1 only if
    alpha < S P_TC/P_CU, eq. 18-19).
    """
    _, _, i_cc = stencil_cc(k, t, d)
    _, _, i_tc = stencil_tc(k, t, alpha, sparsity, d)
    cc_memory = is_memory_bound(i_cc, machine_balance(cc_peak, bandwidth))
    tc_memory = is_memory_bound(i_tc, machine_balance(tc_peak, bandwidth))
    return {(True, True): 1, (True, False): 2, (False, True): 3, (False, False): 4}[(cc_memory, tc_memory)]


def sweet_spot(cc_peak: float, tc_peak: float, alpha: float, sparsity: float) -> bool:
    """True when alpha < S P_TC / P_CU: tensor cores win in scenario 4 (paper 002, eq. 19)."""
    return alpha < sparsity * tc_peak / cc_peak


MB = 2**20  # L2 sizes in the device specs are binary megabytes


def size_mb(rows: int, cols: int, nnz: int, d: int = D_FP64) -> float:
    """A matrix's size as Table 2 counts it: the CSR arrays (values of d bytes, float64 by default,
    int32 indices and row pointers) plus the x and y vectors of d bytes, in MB of 2^20 bytes (eq. 10's
    Q, as csr.save stores them)."""
    return csr_wq(rows, cols, nnz, d)[1] / MB
