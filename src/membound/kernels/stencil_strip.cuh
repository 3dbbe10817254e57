// What stencil_cc.cu and stencil_cc3.cu share: the periodic wrap, the weight index and the update of
// a strip of V output points along y. Set DIMS, RAD, STAR (0 box | 1 star), V and SX (the row pitch
// of the shared-memory tile) before including it. Weights: dense (2*RAD+1)^DIMS array (z, y, x).
#pragma once

#define KW (2 * RAD + 1)
#define NW (DIMS == 3 ? KW * KW * KW : KW * KW)

__device__ __forceinline__ int wrap(int i, int n) {
  if (i < 0 || i >= n) { i %= n; if (i < 0) i += n; }
  return i;
}

__device__ __forceinline__ constexpr int widx(int dz, int dy, int dx) {
  return DIMS == 3 ? ((dz + RAD) * KW + dy + RAD) * KW + dx + RAD : (dy + RAD) * KW + dx + RAD;
}

// acc[v] += every term of the stencil's (dz, dx) column at the strip's V points; `col` is the input
// at the strip's first point shifted by (dz, dx), rows SX apart. Off-star columns add nothing.
__device__ __forceinline__ void strip(double (&acc)[V], const double (&w)[NW], const double* col, int dz, int dx) {
  if (STAR && dz != 0 && dx != 0) return;
  if (!STAR || (dz == 0 && dx == 0)) {        // the whole dy range of this (dz, dx) column
    double c[V + 2 * RAD];
#pragma unroll
    for (int j = 0; j < V + 2 * RAD; ++j) c[j] = col[(j - RAD) * SX];
#pragma unroll
    for (int dy = -RAD; dy <= RAD; ++dy)
#pragma unroll
      for (int v = 0; v < V; ++v) acc[v] = fma(w[widx(dz, dy, dx)], c[v + RAD + dy], acc[v]);
  } else {                                     // star arm off the y axis: dy = 0 only
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = fma(w[widx(dz, 0, dx)], col[v * SX], acc[v]);
  }
}
