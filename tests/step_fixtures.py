"""The data-parallel step the step, trace and Timeline tests share, and its hand-calculated times on an H100 SXM.

Hand calculation (989 TFLOP/s BF16, 3.35 TB/s HBM, NVLink 4 at 450 GB/s per direction):
  G  = gemm 8192³ bf16: 2 × 8192³ = 1,099,511,627,776 FLOP / 989e12 = 1.111741 ms (HBM 3 × 8192² × 2 B
       = 402,653,184 B / 3.35e12 = 0.120 ms: compute-limited)
  A  = allreduce 2**27 bf16 on 8 ranks: S = 2**28 B; 2 × 7/8 × 268,435,456 = 469,762,048 B / 450e9
       = 1.043916 ms (HBM 2S / 3.35e12 = 0.160 ms: link-limited)
  X  = axpy 2**28 fp32: 3 × 2**28 × 4 B = 3,221,225,472 B / 3.35e12 = 0.961560 ms
Timeline: fwd [0, G], bwd1 [G, 2G], ar1 [2G, 2G+A] on comm, bwd2 [2G, 3G], ar2 [3G, 3G+A] (after bwd2; comm
free since 2G+A), opt [3G+A, 3G+A+X] (after ar1 and ar2).
  step time = 3G + A + X = 3.335223 + 1.043916 + 0.961560 = 5.340699 ms
  critical path fwd → bwd1 → bwd2 → ar2 → opt
  ar1 runs under bwd2 (A < G): hidden A; ar2 runs alone: exposed A = 1.043916 ms.
"""

from __future__ import annotations

DP_STEP = """\
fwd  = gemm(M=8192, N=8192, K=8192, dtype=bf16)
bwd1 = gemm(M=8192, N=8192, K=8192, dtype=bf16)            after fwd
ar1  = allreduce(n=2**27, dtype=bf16, ranks=8)   on comm   after bwd1
bwd2 = gemm(M=8192, N=8192, K=8192, dtype=bf16)            after bwd1
ar2  = allreduce(n=2**27, dtype=bf16, ranks=8)   on comm   after bwd2
opt  = axpy(n=2**28, dtype=fp32)                           after ar1, ar2
"""
G = 2 * 8192**3 / 989e12
A = 2 * 7 / 8 * 2**28 / 450e9
X = 3 * 2**28 * 4 / 3.35e12
