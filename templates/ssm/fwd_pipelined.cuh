// Pipelined sequential scan: the sequential kernel's compute layout (thread
// (channel, split) runs the recurrence for its states along the whole
// sequence) with every global memory access moved to two producer warps.
// The producers copy chunks with cp.async into a ring of kItems shared-
// memory stages (through two raw landing slots and a conversion pass when
// the inputs are halves or delta is transformed), hand each stage to the
// kThreads compute warps through a named barrier, and write the outputs of
// each stage they hand back. Each row's global start is computed once per
// block into a table, so a 16-byte copy costs a few instructions. The compute warps never touch
// global memory inside the loop and never wait on it while the producer is ahead.
#pragma once

#include "ssm/fwd_async.cuh"
#include "ssm/fwd_chunk.cuh"

namespace ssmtune_kernels {

// One row of a chunk as the producers copy it: its global start (timestep
// 0), its byte offset in a stage (or landing slot), and whether it belongs to
// a channel past the tile (copied as zeros).
struct PipeRow {
  const char* src;
  int dst;
  int idle;
};

template <typename Tr>
struct PipeRing {
  using InT = typename Tr::InT;
  using Raw = typename Vec4Raw<InT>::type;
  using Bits = typename Vec4Raw<InT>::Bits;   // one element's bits
  static constexpr int kStages = Tr::kItems;  // float stages in the ring
  static constexpr int kLand = 2;             // raw landing slots (conversion only)
  static constexpr int kProd = kPipeProducerThreads;
  static constexpr int kBlock = Tr::kThreads + kProd;
  // fp32 rows that need no transform land in the float stages directly.
  static constexpr bool kConvert = sizeof(InT) != 4 || Tr::kHasBias || Tr::kSoftplus;
  static constexpr int kEs = static_cast<int>(sizeof(InT));
  static constexpr int kPiece = 16 / kEs;              // elements per copy
  static constexpr int kPieces = Tr::kChunk / kPiece;  // copies per row
  static constexpr int kBcRows = (Tr::kVarB ? Tr::kN : 0) + (Tr::kVarC ? Tr::kN : 0);
  static constexpr int kRows = 2 * Tr::kDStep + kBcRows;
  static constexpr ChunkSmemLayout kL =
      chunk_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC);
  static constexpr PipeSmemLayout kP = pipe_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB,
                                                        Tr::kVarC, kStages, kEs, kConvert);
  static_assert(kStages >= 2 && kStages <= 4, "pipelined: 2 to 4 stages (items)");
  static_assert(Tr::kChunk % kPiece == 0, "pipelined: chunk must be a multiple of 16 bytes");
  static_assert(kBlock <= 1024, "pipelined: compute and producer threads must be <= 1024");

  // Named barriers: stage s is full (producers -> compute) or empty
  // (compute -> producers); the producers' own barrier is the last one.
  __device__ __forceinline__ static int full(int s) { return 1 + s; }
  __device__ __forceinline__ static int empty(int s) { return 1 + kStages + s; }
  __device__ __forceinline__ static void producers_sync() { named_sync(15, kProd); }

  __device__ __forceinline__ static float* stage(float* smem, int j) {
    return smem + (j % kStages) * kP.stage_floats;
  }
  __device__ __forceinline__ static InT* landing(float* smem, int j) {
    return reinterpret_cast<InT*>(reinterpret_cast<char*>(smem) + kP.land_offset +
                                  (j % kLand) * kP.land_bytes);
  }
  __device__ __forceinline__ static PipeRow* table(float* smem) {
    return reinterpret_cast<PipeRow*>(reinterpret_cast<char*>(smem) + kP.table_offset);
  }
};

// The producers' work; `lane` is the thread's index among them (0..kProd).
template <typename Tr>
struct PipeProducer {
  using Ring = PipeRing<Tr>;
  using InT = typename Tr::InT;
  using Raw = typename Ring::Raw;
  const SsmFwdParams& p;
  const Tile& tile;
  float* smem;
  int lane;

  __device__ __forceinline__ int start(int j) const { return j * Tr::kChunk; }
  __device__ __forceinline__ int length(int j) const {
    return min(Tr::kChunk, p.seqlen - start(j));
  }

  // Fills the row table: dt and u rows per channel, then B and C rows per
  // state. Channels past the tile point at channel d0's row (valid memory;
  // their copies read nothing).
  __device__ __forceinline__ void fill_table() const {
    constexpr ChunkSmemLayout l = Ring::kL;
    PipeRow* table = Ring::table(smem);
    for (int r = lane; r < Ring::kRows; r += Ring::kProd) {
      PipeRow row;
      long long off;
      const void* base;
      int dst_float;
      row.idle = 0;
      if (r < 2 * Tr::kDStep) {
        const int c = r % Tr::kDStep;
        row.idle = c >= tile.nd;
        const int d = tile.d0 + (row.idle ? 0 : c);
        if (r < Tr::kDStep) {
          base = p.delta;
          off = tile.b * p.delta_batch_stride + d * p.delta_dim_stride;
          dst_float = l.dt + c * l.row;
        } else {
          base = p.u;
          off = tile.b * p.u_batch_stride + d * p.u_dim_stride;
          dst_float = l.u + c * l.row;
        }
      } else {
        const int k = r - 2 * Tr::kDStep;
        const bool is_b = Tr::kVarB && k < Tr::kN;
        const int n = Tr::kVarB && !is_b ? k - Tr::kN : k;
        base = is_b ? p.B : p.C;
        off = is_b ? bc_index(p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, tile, n, 0)
                   : bc_index(p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, tile, n, 0);
        dst_float = (is_b ? l.b : l.c) + n * l.bc_row;
      }
      row.src = static_cast<const char*>(base) + off * Ring::kEs;
      row.dst = Ring::kConvert ? r * Tr::kChunk * Ring::kEs : 4 * dst_float;
      table[r] = row;
    }
    Ring::producers_sync();
  }

  // Issues chunk j's copies (none past the last chunk) and closes one copy
  // group either way, so that chunk j is always group j of this thread.
  // Rows that are not 16-byte aligned are copied element by element, at
  // once (a rare path, kept small: its registers count for the whole kernel).
  __device__ __forceinline__ void issue(int j) const {
    if (j < p.n_chunks) {
      const bool aligned = p.align16 != 0;
      const int t0 = start(j), len = length(j);
      char* base = Ring::kConvert ? reinterpret_cast<char*>(Ring::landing(smem, j))
                                  : reinterpret_cast<char*>(Ring::stage(smem, j));
      const PipeRow* table = Ring::table(smem);
      for (int i = lane; i < Ring::kRows * Ring::kPieces; i += Ring::kProd) {
        const int r = i / Ring::kPieces, t = (i % Ring::kPieces) * Ring::kPiece;
        const PipeRow row = table[r];
        const int elems = row.idle ? 0 : max(0, min(Ring::kPiece, len - t));
        // Past the end, read from the chunk's start (valid) and zero-fill.
        const char* src = row.src + static_cast<long long>(t0 + (elems > 0 ? t : 0)) * Ring::kEs;
        char* dst = base + row.dst + t * Ring::kEs;
        if (aligned) {
          cp_async16(dst, src, elems * Ring::kEs);
        } else {
          using Bits = typename Ring::Bits;
          const Bits* from = reinterpret_cast<const Bits*>(src);
          Bits* to = reinterpret_cast<Bits*>(dst);
          for (int e = 0; e < Ring::kPiece; ++e) to[e] = e < elems ? from[e] : Bits(0);
        }
      }
    }
    cp_async_commit();
  }

  // Makes chunk j's float stage complete: waits for its copies and, when
  // converting, turns the landing slot into float rows and refills the slot
  // with chunk j + kLand.
  __device__ __forceinline__ void ready(int j) const {
    constexpr ChunkSmemLayout l = Ring::kL;
    float* s = Ring::stage(smem, j);
    const int len = length(j);
    if constexpr (Ring::kConvert) {
      cp_async_wait<Ring::kLand - 1>();
      Ring::producers_sync();  // every producer's copies are visible to all
      const InT* land = Ring::landing(smem, j);
      constexpr int kGroups = Tr::kChunk / 4;
      for (int i = lane; i < Tr::kDStep * kGroups; i += Ring::kProd) {
        const int c = i / kGroups, t = (i % kGroups) * 4;
        if (t >= len) continue;
        const int valid = c < tile.nd ? min(4, len - t) : 0;
        const Raw dv = *reinterpret_cast<const Raw*>(land + c * Tr::kChunk + t);
        const Raw uv = *reinterpret_cast<const Raw*>(land + (Tr::kDStep + c) * Tr::kChunk + t);
        ChunkStage<Tr>::store(p, tile, c, t, valid, dv, uv, s, l);
      }
      for (int i = lane; i < Ring::kBcRows * kGroups; i += Ring::kProd) {
        const int k = i / kGroups, t = (i % kGroups) * 4;
        if (t >= len) continue;
        const Raw v = *reinterpret_cast<const Raw*>(land + (2 * Tr::kDStep + k) * Tr::kChunk + t);
        const bool is_b = Tr::kVarB && k < Tr::kN;
        float* row =
            is_b ? s + l.b + k * l.bc_row : s + l.c + (Tr::kVarB ? k - Tr::kN : k) * l.bc_row;
        BcStage<Tr>::store(v, row + t);
      }
      Ring::producers_sync();  // the slot is read before it is refilled
      issue(j + Ring::kLand);
    } else {
      cp_async_wait<Ring::kStages - 2>();
    }
  }
};

// Resident blocks to ask of ptxas, for a register ceiling per thread of 64
// at up to 4 states per thread and 128 above. Left to itself, ptxas gave
// the 192-thread default 62 registers, but 56 and spills once every flag
// was on.
template <typename Tr>
struct PipeMinBlocks {
  static constexpr int kRegs = ChannelStates<Tr>::kPerThread > 4 ? 128 : 64;
  static constexpr int kRaw = 65536 / ((Tr::kThreads + kPipeProducerThreads) * kRegs);
  static constexpr int value = kRaw < 1 ? 1 : kRaw;
};

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads + kPipeProducerThreads, PipeMinBlocks<Tr>::value)
    ssm_fwd_pipelined(const SsmFwdParams p) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using Ring = PipeRing<Tr>;
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr int kS = Ring::kStages;
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  constexpr ChunkSmemLayout l = Ring::kL;
  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);
  const int n_chunks = p.n_chunks;

  if (threadIdx.x >= Tr::kThreads) {
    // Producers. Chunk j is copy group j; stage j % kS serves chunks j,
    // j + kS, ...; it is refilled once the compute warps hand it back.
    const PipeProducer<Tr> pr{p, tile, smem, static_cast<int>(threadIdx.x) - Tr::kThreads};
    pr.fill_table();
    constexpr int kAhead = Ring::kConvert ? Ring::kLand : kS;
    for (int j = 0; j < kAhead; ++j) pr.issue(j);
    pr.ready(0);
    named_arrive(Ring::full(0), Ring::kBlock);
    for (int i = 0; i < n_chunks; ++i) {
      // The compute warps run chunk i; hand back chunk i - 1's stage.
      if (i >= 1) {
        named_sync(Ring::empty((i - 1) % kS), Ring::kBlock);
        write_chunk<Tr>(p, tile, pr.start(i - 1), pr.length(i - 1), Ring::stage(smem, i - 1), l,
                        pr.lane, Ring::kProd);
        if constexpr (!Ring::kConvert) {
          Ring::producers_sync();  // its outputs are read before the copies overwrite it
          pr.issue(i - 1 + kS);
        }
      }
      if (i + 1 < n_chunks) {
        pr.ready(i + 1);
        named_arrive(Ring::full((i + 1) % kS), Ring::kBlock);
      }
    }
    named_sync(Ring::empty((n_chunks - 1) % kS), Ring::kBlock);
    write_chunk<Tr>(p, tile, pr.start(n_chunks - 1), pr.length(n_chunks - 1),
                    Ring::stage(smem, n_chunks - 1), l, pr.lane, Ring::kProd);
    return;
  }

  // Compute warps: as the sequential kernel, one chunk per stage.
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  AccT h[kPer], unused[kPer];
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const int n = ChannelStates<Tr>::state(s, k);
    h[k] = 0;
    if constexpr (Tr::kH0)
      if (active && n < Tr::kN) h[k] = p.h0[tile.b * p.h0_batch_stride + d * p.h0_dim_stride + n];
    unused[k] = 1;
  }
  for (int j = 0; j < n_chunks; ++j) {
    const int len = min(Tr::kChunk, p.seqlen - j * Tr::kChunk);
    named_sync(Ring::full(j % kS), Ring::kBlock);
    run_chunk<Tr, true, 2>(cs, h, unused, c, s, len, Ring::stage(smem, j), l);
    named_arrive(Ring::empty(j % kS), Ring::kBlock);
  }
  if constexpr (Tr::kLastState) {
    if (active) {
#pragma unroll
      for (int k = 0; k < kPer; ++k) {
        const int n = ChannelStates<Tr>::state(s, k);
        if (n < Tr::kN)
          p.last_state[tile.b * p.last_state_batch_stride + d * p.last_state_dim_stride + n] =
              static_cast<float>(h[k]);
      }
    }
  }
}

}  // namespace ssmtune_kernels
