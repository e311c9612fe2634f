"""The CUDA dialect as C++20, for checking RawKernel sources without a GPU: one std::thread per CUDA thread.

threadIdx is thread-local, __syncthreads a barrier over the block's threads, __shared__ one static per
block run; each block of the grid runs in turn. The vector types the stream kernels load (float4, double2)
are plain structs. Tests that use it skip where no C++20 compiler is installed.
"""

from __future__ import annotations

import shutil

COMPILER = shutil.which("g++")

EMULATION = r"""
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#define __global__
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(x)
struct Index { int x, y, z; };
static thread_local Index threadIdx;
static Index blockIdx, blockDim;
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
static std::barrier<>* block_barrier;
static void __syncthreads() { block_barrier->arrive_and_wait(); }
template <class Body> void launch(Index grid, Index block, Body body) {
    blockDim = block;
    const int threads = block.x * block.y;
    for (int z = 0; z < grid.z; ++z) for (int y = 0; y < grid.y; ++y) for (int x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
        std::barrier<> barrier(threads);
        block_barrier = &barrier;
        std::vector<std::thread> running;
        for (int t = 0; t < threads; ++t)
            running.emplace_back([&, t] { threadIdx = {t % block.x, t / block.x, 0}; body(); });
        for (auto& thread : running) thread.join();
    }
}
"""
