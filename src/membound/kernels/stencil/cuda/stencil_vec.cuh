// What the vector kernels share (stencil_stream, and stencil_cc with VS): a thread sums VW = 16 / ELEM
// adjacent columns, reading a row's values as 16-byte vectors from shared memory and widening each
// once (VW, HV: stencil_real.cuh). Include after stencil_strip.cuh.
#pragma once

union Vec {   // one 16-byte vector of a row, as a whole or as elements
  uint4 q;
  real e[VW];
};

// Is (ds, dy, dx) a term of the stencil? (a star: at most one offset non-zero)
__device__ __forceinline__ constexpr bool term(int ds, int dy, int dx) {
  return !STAR || (ds != 0) + (dy != 0) + (dx != 0) <= 1;
}

// The widened values of a row at offsets [-RAD, VW + RAD) from `p` (a thread's vector in a shared row);
// own: only its own VW values (a star's rows off the centre need no halo).
__device__ __forceinline__ void row_values(acc_t (&v)[VW + 2 * RAD], const real* p, bool own) {
  real e[(2 * HV + 1) * VW];
#pragma unroll
  for (int h = -HV; h <= HV; ++h) {
    if (own && h != 0) continue;
    Vec q;
    q.q = *reinterpret_cast<const uint4*>(p + h * VW);
#pragma unroll
    for (int j = 0; j < VW; ++j) e[(h + HV) * VW + j] = q.e[j];
  }
#pragma unroll
  for (int j = 0; j < VW + 2 * RAD; ++j)
    if (!own || (j >= RAD && j < RAD + VW)) v[j] = to_acc(e[HV * VW - RAD + j]);
}


// Store a thread's VW sums, rounded to storage, into `row` (a global row of nx elements) from column
// gx: one 16-byte store where the row length is a multiple of VW, else the elements inside the row.
__device__ __forceinline__ void store_vec(real* row, const acc_t (&a)[VW], int gx, int nx) {
  Vec r;
#pragma unroll
  for (int u = 0; u < VW; ++u) r.e[u] = to_real(a[u]);
  if (nx % VW == 0 && gx + VW <= nx) {
    *reinterpret_cast<uint4*>(row + gx) = r.q;
  } else {
#pragma unroll
    for (int u = 0; u < VW; ++u)
      if (gx + u < nx) row[gx + u] = r.e[u];
  }
}

// The sums of one vector strip: V output rows of VW adjacent columns. Its V + 2 RAD input rows (in each
// of the 2 RAD + 1 input planes in 3D) pass through registers once each, every row added into the
// outputs it is a term of (a ring of 2 RAD + 1 rows of sums, compile-time indices), and an output row
// leaves as soon as it has all its terms. plane(dz): the thread's vector in the strip's first input
// row (output row 0 shifted by -RAD in y) of plane dz (2D: dz = 0), rows SX elements apart;
// store(o, sums): output row o of the strip is finished.
template <typename W, typename Plane, typename Store>
__device__ __forceinline__ void vector_strip(const W& w, const Plane& plane, const Store& store) {
  constexpr int RZ = DIMS == 3 ? RAD : 0;
  acc_t acc[KW][VW];
#pragma unroll
  for (int a = 0; a < KW; ++a)
#pragma unroll
    for (int u = 0; u < VW; ++u) acc[a][u] = 0;
#pragma unroll
  for (int j = 0; j < V + 2 * RAD; ++j) {    // a term of outputs o = j - RAD - dy
    const bool centre = j >= RAD && j < V + RAD;   // the row of an output (dy = 0)
#pragma unroll
    for (int dz = -RZ; dz <= RZ; ++dz) {
      if (STAR && dz != 0 && !centre) continue;     // a star's other planes: (dz, 0, 0) only
      acc_t v[VW + 2 * RAD];
      row_values(v, plane(dz) + j * SX, STAR && (dz != 0 || !centre));
#pragma unroll
      for (int dy = -RAD; dy <= RAD; ++dy) {
        const int o = j - RAD - dy;
        if (o < 0 || o >= V) continue;
#pragma unroll
        for (int dx = -RAD; dx <= RAD; ++dx) {
          if (!term(dz, dy, dx)) continue;
          const acc_t wt = w[widx(dz, dy, dx)];
#pragma unroll
          for (int u = 0; u < VW; ++u) acc[o % KW][u] = fma(wt, v[u + RAD + dx], acc[o % KW][u]);
        }
      }
    }
    if (j >= 2 * RAD) {
      store(j - 2 * RAD, acc[(j - 2 * RAD) % KW]);
#pragma unroll
      for (int u = 0; u < VW; ++u) acc[(j - 2 * RAD) % KW][u] = 0;
    }
  }
}
