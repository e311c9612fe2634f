"""What the Compare tab's tests (Qt-free and in the window) share: the 4096³ fp16 GEMM and a run of it that states
an H100 as its device."""

from __future__ import annotations

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
H100_RUN = {
    "declaration": GEMM,
    "device": "GPU 0: NVIDIA H100 80GB HBM3 (compute capability 9.0)",
    "samples_s": [2.0e-4, 1.9e-4, 2.1e-4],
    "valid": True,
}
