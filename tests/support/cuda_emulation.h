// Runs CUDA kernel templates on the host, for CPU tests of kernel logic
// without a GPU: each thread of a block is a std::thread, __syncthreads is a
// barrier, a shuffle exchanges through a slot array between two
// barriers, shared memory is one static array, blocks run one after
// another. Include it before any kernel template, in one translation unit.
// The fast exp's inline PTX is compiled out (emulate the accurate exp only).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_types.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __shared__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__
#define __launch_bounds__(...)
#define asm(...) (void)0

// Around the kernel templates an emulated test includes: device code run on
// the host trips host-only warnings (parameters used only in device paths,
// registers the emulation leaves unread).
#define SSMTUNE_EMULATED_KERNELS_BEGIN                                                    \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wunused-parameter\"") \
      _Pragma("GCC diagnostic ignored \"-Wunused-variable\"")                             \
          _Pragma("GCC diagnostic ignored \"-Wunused-but-set-variable\"")                 \
              _Pragma("GCC diagnostic ignored \"-Wuninitialized\"")                       \
                  _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define SSMTUNE_EMULATED_KERNELS_END _Pragma("GCC diagnostic pop")

namespace ssmtune::emulation {

struct Index3 {
  unsigned x = 0, y = 0, z = 0;
};
inline thread_local Index3 thread_index;
inline Index3 block_index, block_dim, grid_dim;

class Barrier {
 public:
  void reset(int n) {
    n_ = n;
    count_ = 0;
  }
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen_ != gen; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int n_ = 1, count_ = 0;
  long gen_ = 0;
};
inline Barrier block_barrier;
inline double shuffle_slots[1024];

// Runs body() as every thread of every block of grid (x, y, z), `threads`
// per block; `before_block` runs before each block (e.g. to poison shared
// memory). Every thread of a block must reach each barrier and shuffle.
inline void launch(unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                   const std::function<void()>& body,
                   const std::function<void()>& before_block = {}) {
  grid_dim = {gx, gy, gz};
  block_dim = {threads, 1, 1};
  for (unsigned bz = 0; bz < gz; ++bz)
    for (unsigned by = 0; by < gy; ++by)
      for (unsigned bx = 0; bx < gx; ++bx) {
        block_index = {bx, by, bz};
        if (before_block) before_block();
        block_barrier.reset(static_cast<int>(threads));
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
          pool.emplace_back([&body, t] {
            thread_index = {t, 0, 0};
            body();
          });
        for (auto& th : pool) th.join();
      }
}

// For kernels without barriers or shuffles: threads run one after another.
inline void launch_serial(unsigned gx, unsigned gy, unsigned gz, unsigned threads,
                          const std::function<void()>& body) {
  grid_dim = {gx, gy, gz};
  block_dim = {threads, 1, 1};
  for (unsigned bz = 0; bz < gz; ++bz)
    for (unsigned by = 0; by < gy; ++by)
      for (unsigned bx = 0; bx < gx; ++bx) {
        block_index = {bx, by, bz};
        for (unsigned t = 0; t < threads; ++t) {
          thread_index = {t, 0, 0};
          body();
        }
      }
}

}  // namespace ssmtune::emulation

#define threadIdx (::ssmtune::emulation::thread_index)
#define blockIdx (::ssmtune::emulation::block_index)
#define blockDim (::ssmtune::emulation::block_dim)
#define gridDim (::ssmtune::emulation::grid_dim)

inline void __syncthreads() { ssmtune::emulation::block_barrier.wait(); }
namespace ssmtune::emulation {
// One shuffle: every thread of the block posts v, then reads lane
// source(lane) of its own warp (its own value where that lane is outside
// the warp, as the hardware's up and down shuffles leave it).
template <typename T, typename Source>
inline T shuffle(T v, Source source) {
  const unsigned t = thread_index.x;
  shuffle_slots[t] = static_cast<double>(v);
  block_barrier.wait();
  const int lane = static_cast<int>(t & 31u), from = source(lane);
  const T r = from >= 0 && from < 32 ? static_cast<T>(shuffle_slots[(t & ~31u) | from]) : v;
  block_barrier.wait();
  return r;
}
}  // namespace ssmtune::emulation

template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask) {
  return ssmtune::emulation::shuffle(v, [lane_mask](int lane) { return lane ^ lane_mask; });
}
template <typename T>
inline T __shfl_up_sync(unsigned, T v, int delta) {
  return ssmtune::emulation::shuffle(v, [delta](int lane) { return lane - delta; });
}
template <typename T>
inline T __shfl_down_sync(unsigned, T v, int delta) {
  return ssmtune::emulation::shuffle(v, [delta](int lane) { return lane + delta; });
}
template <typename T>
inline T __shfl_sync(unsigned, T v, int src_lane) {
  return ssmtune::emulation::shuffle(v, [src_lane](int) { return src_lane; });
}
// Every thread of the block must reach it (a block barrier stands in).
inline void __syncwarp(unsigned = 0xffffffffu) { ssmtune::emulation::block_barrier.wait(); }
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline float __fdividef(float a, float b) { return a / b; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, 4);
  return i;
}
inline float __int_as_float(int i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
