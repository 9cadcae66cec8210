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
// 0), the byte offset where its copies land (a landing slot when
// converting, else a stage) and the float offset of its row in a stage.
struct PipeRow {
  const char* src;
  int land;
  int stage;
};

// One channel's output rows (timestep 0) and its D and delta_bias (read
// once per block, not once per piece).
template <typename InT>
struct PipeOutRow {
  InT* out;
  InT* out_z;
  float D;
  float bias;
};

template <typename Tr>
struct PipeRing {
  using InT = typename Tr::InT;
  using Bits = typename Vec4Raw<InT>::Bits;   // one element's bits
  static constexpr int kStages = Tr::kItems;  // float stages in the ring
  static constexpr int kLand = 2;             // raw landing slots (conversion only)
  static constexpr int kProd = pipe_producer_threads(Tr::kHasZ, Tr::kSoftplus);
  static constexpr int kBlock = Tr::kThreads + kProd;
  // fp32 rows that need no transform land in the float stages directly.
  static constexpr bool kConvert = pipe_converts(sizeof(InT), Tr::kHasBias, Tr::kSoftplus);
  static constexpr int kEs = static_cast<int>(sizeof(InT));
  static constexpr int kPiece = 16 / kEs;              // elements per copy
  static constexpr int kPieces = Tr::kChunk / kPiece;  // copies per row
  static constexpr int kBcRows = (Tr::kVarB ? Tr::kN : 0) + (Tr::kVarC ? Tr::kN : 0);
  static constexpr int kZRow0 = 2 * Tr::kDStep + kBcRows;  // z rows follow B and C
  static constexpr int kRows = kZRow0 + (Tr::kHasZ ? Tr::kDStep : 0);
  static constexpr ChunkSmemLayout kL =
      chunk_smem_layout(Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC);
  static constexpr PipeSmemLayout kP = pipe_smem_layout(
      Tr::kN, Tr::kChunk, Tr::kDStep, Tr::kVarB, Tr::kVarC, Tr::kHasZ, kStages, kEs, kConvert);
  static_assert(kP.rows == kRows, "pipelined: the host's row count differs from the kernel's");
  static_assert(kStages >= 2 && kStages <= 4, "pipelined: 2 to 4 stages (items)");
  static_assert(Tr::kChunk % kPiece == 0, "pipelined: chunk must be a multiple of 16 bytes");
  static_assert(kBlock <= 1024, "pipelined: compute and producer threads must be <= 1024");

  // Named barriers: stage s is full (producers -> compute, 1 + s) or empty
  // (compute -> producers, 1 + kStages + s); the producers' own barrier
  // comes after them. 2 kStages + 2 barriers per block in all.
  static constexpr int kBarriers = 2 * kStages + 2;
  __device__ __forceinline__ static void sync_full(int s) {
    named_barrier_at<false, 1, kStages>(s, kBlock);
  }
  __device__ __forceinline__ static void arrive_full(int s) {
    named_barrier_at<true, 1, kStages>(s, kBlock);
  }
  __device__ __forceinline__ static void sync_empty(int s) {
    named_barrier_at<false, 1 + kStages, kStages>(s, kBlock);
  }
  __device__ __forceinline__ static void arrive_empty(int s) {
    named_barrier_at<true, 1 + kStages, kStages>(s, kBlock);
  }
  __device__ __forceinline__ static void producers_sync() {
    named_barrier<false, 1 + 2 * kStages>(kProd);
  }

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
  __device__ __forceinline__ static PipeOutRow<InT>* outs(float* smem) {
    return reinterpret_cast<PipeOutRow<InT>*>(reinterpret_cast<char*>(smem) + kP.outs_offset);
  }
  // Rows of channels past the tile are copied as zeros.
  __device__ __forceinline__ static bool idle(int r, const Tile& tile) {
    if (r >= kZRow0) return r - kZRow0 >= tile.nd;
    return r < 2 * Tr::kDStep && static_cast<int>(static_cast<unsigned>(r) % Tr::kDStep) >= tile.nd;
  }

  // Calls f(row, k) for the (row, piece k) pairs of a kRowsN x kPer grid
  // that producer `lane` owns. Where kPer divides the producer count, a
  // lane keeps one piece index and steps through rows (no division per
  // piece); otherwise pieces are dealt out one by one.
  template <int kRowsN, int kPer, typename F>
  __device__ __forceinline__ static void for_each_piece(int lane, F&& f) {
    const unsigned ul = static_cast<unsigned>(lane);
    if constexpr (kProd % kPer == 0) {
      const int k = static_cast<int>(ul % kPer);
      for (int r = static_cast<int>(ul / kPer); r < kRowsN; r += kProd / kPer) f(r, k);
    } else {
      for (unsigned i = ul; i < unsigned{kRowsN * kPer}; i += kProd)
        f(static_cast<int>(i / kPer), static_cast<int>(i % kPer));
    }
  }
};

// What one launch of the pipelined kernel runs: the whole sequence, or
// (split: ssm/fwd_split.cuh) one segment of it, from state 0 to its end
// state and decay (no outputs), or from its incoming state with outputs.
enum class PipePass { kWhole, kSegmentStates, kSegmentOutputs };

// The producers' work; `lane` is the thread's index among them (0..kProd).
// They walk the chunks [j0, j0 + nc) of the sequence; chunk indices below
// are relative to j0. The states pass copies no C or z rows.
template <typename Tr, PipePass kPass = PipePass::kWhole>
struct PipeProducer {
  using Ring = PipeRing<Tr>;
  using InT = typename Tr::InT;
  const SsmFwdParams& p;
  const Tile& tile;
  float* smem;
  int lane;
  int j0;  // first chunk
  int nc;  // chunks walked

  // Rows this pass does not read (copied as zeros, reading nothing).
  __device__ __forceinline__ bool skipped(int r) const {
    if (Ring::idle(r, tile)) return true;
    if constexpr (kPass == PipePass::kSegmentStates) {
      if (r >= Ring::kZRow0) return true;                                           // z
      if (r >= 2 * Tr::kDStep) return !(Tr::kVarB && r - 2 * Tr::kDStep < Tr::kN);  // C
    }
    return false;
  }

  __device__ __forceinline__ int start(int j) const { return (j0 + j) * Tr::kChunk; }
  __device__ __forceinline__ int length(int j) const {
    return min(Tr::kChunk, p.seqlen - start(j));
  }

  // Fills the tables: dt and u rows per channel, then B and C rows per
  // state, then z rows per channel; each channel's output rows, D and
  // delta_bias. Channels past the tile point at channel d0's rows (valid
  // memory; their copies read nothing, and their outputs are not written).
  __device__ __forceinline__ void fill_table() const {
    constexpr ChunkSmemLayout l = Ring::kL;
    PipeRow* table = Ring::table(smem);
    for (int r = lane; r < Ring::kRows; r += Ring::kProd) {
      PipeRow row;
      long long off;
      const void* base;
      if (r >= Ring::kZRow0) {
        const int c = r - Ring::kZRow0;
        const int d = tile.d0 + (c < tile.nd ? c : 0);
        base = p.z;
        off = tile.b * p.z_batch_stride + d * p.z_dim_stride;
        row.stage = Ring::kP.z + c * l.row;
      } else if (r < 2 * Tr::kDStep) {
        const int c = r % Tr::kDStep;
        const int d = tile.d0 + (c < tile.nd ? c : 0);
        if (r < Tr::kDStep) {
          base = p.delta;
          off = tile.b * p.delta_batch_stride + d * p.delta_dim_stride;
          row.stage = l.dt + c * l.row;
        } else {
          base = p.u;
          off = tile.b * p.u_batch_stride + d * p.u_dim_stride;
          row.stage = l.u + c * l.row;
        }
      } else {
        const int k = r - 2 * Tr::kDStep;
        const bool is_b = Tr::kVarB && k < Tr::kN;
        const int n = Tr::kVarB && !is_b ? k - Tr::kN : k;
        base = is_b ? p.B : p.C;
        off = is_b ? bc_index(p.B_batch_stride, p.B_group_stride, p.B_dstate_stride, tile, n, 0)
                   : bc_index(p.C_batch_stride, p.C_group_stride, p.C_dstate_stride, tile, n, 0);
        row.stage = (is_b ? l.b : l.c) + n * l.bc_row;
      }
      row.src = static_cast<const char*>(base) + off * Ring::kEs;
      row.land = Ring::kConvert ? r * Tr::kChunk * Ring::kEs : 4 * row.stage;
      table[r] = row;
    }
    PipeOutRow<InT>* outs = Ring::outs(smem);
    for (int c = lane; c < Tr::kDStep; c += Ring::kProd) {
      const int d = tile.d0 + (c < tile.nd ? c : 0);
      PipeOutRow<InT> o;
      o.out = static_cast<InT*>(p.out) + tile.b * p.out_batch_stride + d * p.out_dim_stride;
      o.out_z = nullptr;
      if constexpr (Tr::kHasZ)
        o.out_z =
            static_cast<InT*>(p.out_z) + tile.b * p.out_z_batch_stride + d * p.out_z_dim_stride;
      o.D = Tr::kHasD ? p.D[d] : 0.0f;
      o.bias = Tr::kHasBias ? p.delta_bias[d] : 0.0f;
      outs[c] = o;
    }
    Ring::producers_sync();
  }

  // Issues chunk j's copies (none past the last chunk) and closes one copy
  // group either way, so that chunk j is always group j of this thread.
  // Copies past the end and of idle rows read nothing and zero-fill, so a
  // chunk lands with the identity step as its padding. Rows that are not
  // 16-byte aligned (odd sequence lengths, views) are copied asynchronously
  // too: fp32 rows straight into a stage 4 bytes at a time; rows that land
  // to be converted as the 16-byte blocks from the one holding the chunk's
  // first element on, shifted by the row's misalignment m, so that the
  // chunk's last m bytes are the first block of the next chunk's landing
  // slot (issued here as j == nc for the last chunk).
  __device__ __forceinline__ void issue(int j) const {
    const bool aligned = p.align16 != 0;
    const bool tail_only = Ring::kConvert && !aligned && j == nc;
    if (j < nc || tail_only) {
      // One loop per case, so that the aligned one carries no branch.
      if (aligned) {
        copy_rows<0>(j, false);
      } else if constexpr (Ring::kConvert) {
        copy_rows<1>(j, tail_only);
      } else {
        copy_rows<2>(j, false);
      }
    }
    cp_async_commit();
  }

  // Chunk j's copies, kMode 0: 16-byte rows; 1: shifted 16-byte blocks
  // (converted rows); 2: 4 bytes at a time (fp32 rows into a stage).
  template <int kMode>
  __device__ __forceinline__ void copy_rows(int j, bool tail_only) const {
    const int t0 = start(j), len = tail_only ? 0 : length(j);
    char* base = Ring::kConvert ? reinterpret_cast<char*>(Ring::landing(smem, j))
                                : reinterpret_cast<char*>(Ring::stage(smem, j));
    const PipeRow* table = Ring::table(smem);
    const long long t0_bytes = static_cast<long long>(t0) * Ring::kEs;
    Ring::template for_each_piece<Ring::kRows, Ring::kPieces>(lane, [&](int r, int k) {
      const int t = k * Ring::kPiece;
      const PipeRow row = table[r];
      char* dst = base + row.land + t * Ring::kEs;
      if constexpr (kMode == 0) {
        const int elems = skipped(r) ? 0 : max(0, min(Ring::kPiece, len - t));
        // Past the end, read from the chunk's start (valid) and zero-fill.
        const char* src = row.src + t0_bytes + (elems > 0 ? t * Ring::kEs : 0);
        cp_async16(dst, src, elems * Ring::kEs);
      } else if constexpr (kMode == 1) {
        if (tail_only && k > 0) return;
        const int m = static_cast<int>(reinterpret_cast<unsigned long long>(row.src) & 15);
        const char* block = row.src - m + t0_bytes + t * Ring::kEs;
        const long long left =
            static_cast<long long>(p.seqlen) * Ring::kEs + m - t0_bytes - t * Ring::kEs;
        const int bytes = skipped(r) ? 0 : static_cast<int>(max(0LL, min(16LL, left)));
        cp_async16(dst, bytes > 0 ? block : row.src - m, bytes);
      } else {
        const int elems = skipped(r) ? 0 : max(0, min(Ring::kPiece, len - t));
        const char* src = row.src + t0_bytes + t * Ring::kEs;
#pragma unroll
        for (int e = 0; e < Ring::kPiece; ++e)
          cp_async4(dst + 4 * e, e < elems ? src + 4 * e : row.src, e < elems ? 4 : 0);
      }
    });
  }

  // Makes chunk j's float stage complete: waits for its copies and, when
  // converting, turns the landing slot into float rows, 16 bytes of raw
  // row at a time, and refills the slot with chunk j + kLand. The landing
  // slot's padding and idle rows are zeros already; only a delta transform
  // must be kept off them.
  __device__ __forceinline__ void ready(int j) const {
    if constexpr (Ring::kConvert) {
      // Shifted rows end in the next chunk's slot: wait for it too. One
      // loop per case, so that the aligned one carries no branch.
      if (p.align16 != 0) {
        cp_async_wait<Ring::kLand - 1>();
        Ring::producers_sync();  // every producer's copies are visible to all
        convert_rows<true>(j);
      } else {
        cp_async_wait<0>();
        Ring::producers_sync();
        convert_rows<false>(j);
      }
      Ring::producers_sync();  // the slot is read before it is refilled
      issue(j + Ring::kLand);
    } else {
      cp_async_wait<Ring::kStages - 2>();
    }
  }

  // Chunk j's landing slot into its float stage (the delta transform on the
  // dt rows). Shifted rows: element e at byte m + e * kEs of the row, past
  // the chunk's bytes in the next chunk's slot.
  template <bool kAligned>
  __device__ __forceinline__ void convert_rows(int j) const {
    constexpr int kQuads = Ring::kPiece / 4;  // groups of 4 per piece
    float* s = Ring::stage(smem, j);
    const char* land = reinterpret_cast<const char*>(Ring::landing(smem, j));
    const char* next = reinterpret_cast<const char*>(Ring::landing(smem, j + 1));
    const PipeRow* table = Ring::table(smem);
    const int len = length(j);
    Ring::template for_each_piece<Ring::kRows, Ring::kPieces>(lane, [&](int r, int k) {
      const int t = k * Ring::kPiece;
      const PipeRow row = table[r];
      float f[Ring::kPiece];
      if constexpr (kAligned) {
        // One 16-byte piece: 4 fp32 or 8 halves.
        const uint4 raw = *reinterpret_cast<const uint4*>(land + row.land + t * Ring::kEs);
        const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          if constexpr (sizeof(InT) == 4) {
            f[e] = __uint_as_float(words[e]);
          } else {
            const float2 v = unpack2(words[e], InT{});
            f[2 * e] = v.x;
            f[2 * e + 1] = v.y;
          }
        }
      } else {
        const int m = static_cast<int>(reinterpret_cast<unsigned long long>(row.src) & 15);
#pragma unroll
        for (int e = 0; e < Ring::kPiece; ++e) {
          const int o = m + (t + e) * Ring::kEs;
          const char* q = o < Tr::kChunk * Ring::kEs ? land + row.land + o
                                                     : next + row.land + o - Tr::kChunk * Ring::kEs;
          if constexpr (sizeof(InT) == 4) {
            f[e] = *reinterpret_cast<const float*>(q);
          } else {
            f[e] = unpack2(*reinterpret_cast<const unsigned short*>(q), InT{}).x;
          }
        }
      }
      if constexpr (Tr::kHasBias || Tr::kSoftplus) {
        if (r < Tr::kDStep) {
          const bool live = r < tile.nd;
          const float bias = Tr::kHasBias ? Ring::outs(smem)[r].bias : 0.0f;
#pragma unroll
          for (int e = 0; e < Ring::kPiece; ++e)
            f[e] = live && t + e < len ? transform_delta<Tr>(f[e], bias) : 0.0f;
        }
      }
#pragma unroll
      for (int q = 0; q < kQuads; ++q) {
        const float v[4] = {f[4 * q], f[4 * q + 1], f[4 * q + 2], f[4 * q + 3]};
        sts4(s + row.stage + t + 4 * q, v);
      }
    });
  }

  // Writes chunk j's outputs (y + D u, then y silu(z)) from its stage, where
  // the compute warps left y in the dt rows and the copies brought z.
  __device__ __forceinline__ void write(int j) const {
    constexpr ChunkSmemLayout l = Ring::kL;
    constexpr int kGroups = Tr::kChunk / 4;
    const float* s = Ring::stage(smem, j);
    const PipeOutRow<InT>* outs = Ring::outs(smem);
    const int t0 = start(j), len = length(j);
    const bool vec = p.vec4 != 0;
    Ring::template for_each_piece<Tr::kDStep, kGroups>(lane, [&](int c, int k) {
      const int t = 4 * k;
      if (c >= tile.nd || t >= len) return;
      const int valid = min(4, len - t);
      float y[4];
      lds4(s + l.dt + c * l.row + t, y);
      const PipeOutRow<InT> o = outs[c];
      if constexpr (Tr::kHasD) {
        float u[4];
        lds4(s + l.u + c * l.row + t, u);
#pragma unroll
        for (int e = 0; e < 4; ++e) y[e] = fmaf(o.D, u[e], y[e]);
      }
      store4<InT>(o.out, t0 + t, valid, vec, y);
      if constexpr (Tr::kHasZ) {
        float z[4];
        lds4(s + Ring::kP.z + c * l.row + t, z);
#pragma unroll
        for (int e = 0; e < 4; ++e) y[e] *= silu(z[e]);
        store4<InT>(o.out_z, t0 + t, valid, vec, y);
      }
    });
  }
};

// Resident blocks to ask of ptxas (__launch_bounds__), which sets the
// register ceiling to 64K / (blocks x threads): as many blocks as shared
// memory and the barriers allow on an sm_90 SM (228 KiB, 1 KiB reserved per
// block; 64 barriers), so registers never cap the blocks below those two
// limits and the compute loop gets every register they leave. The 64-
// register ceiling this replaced made ptxas re-derive the lanes' store
// addresses from %tid inside the loop. fp64 accumulation (the accuracy
// anchor, never the fast choice) asks for one block: no ceiling, no spills.
template <typename Tr>
struct PipeMinBlocks {
  using Ring = PipeRing<Tr>;
  static constexpr int kBySmem = kSm90SmemPerSm / (Ring::kP.bytes + kSm90SmemReservedPerBlock);
  static constexpr int kByBarriers = 64 / Ring::kBarriers;
  static constexpr int kRaw = kBySmem < kByBarriers ? kBySmem : kByBarriers;
  static constexpr int value = sizeof(typename Tr::AccT) == 8 || kRaw < 1 ? 1 : kRaw;
};

// The pipelined kernel's body for one pass over the chunks [j0, j0 + nc).
// kWhole: from h0 (or 0) over the whole sequence, outputs and last state.
// kSegmentStates: from 0, no outputs; each state's end value and decay
// product go to the carries (slot `seg` of its chain). kSegmentOutputs:
// from the state the carry scan left in slot `seg`, outputs only.
template <typename Tr, PipePass kPass>
__device__ __forceinline__ void pipelined_pass(const SsmFwdParams& p, int j0, int nc, int seg) {
  static_assert(ChunkLayoutChecks<Tr>::kOk, "");
  using Ring = PipeRing<Tr>;
  using AccT = typename Tr::AccT;
  constexpr int kPer = ChannelStates<Tr>::kPerThread;
  constexpr int kS = Ring::kStages;
  constexpr bool kOutputs = kPass != PipePass::kSegmentStates;
  extern __shared__ float4 smem_raw[];
  float* smem = reinterpret_cast<float*>(smem_raw);
  constexpr ChunkSmemLayout l = Ring::kL;
  const Tile tile = make_tile<Tr>(p, blockIdx.x, blockIdx.y);

  if (threadIdx.x >= Tr::kThreads) {
    // Producers. Chunk j is copy group j; stage j % kS serves chunks j,
    // j + kS, ...; it is refilled once the compute warps hand it back.
    const PipeProducer<Tr, kPass> pr{p,  tile, smem, static_cast<int>(threadIdx.x) - Tr::kThreads,
                                     j0, nc};
    pr.fill_table();
    constexpr int kAhead = Ring::kConvert ? Ring::kLand : kS;
    for (int j = 0; j < kAhead; ++j) pr.issue(j);
    pr.ready(0);
    Ring::arrive_full(0);
    for (int i = 0; i < nc; ++i) {
      // The compute warps run chunk i; hand back chunk i - 1's stage.
      if (i >= 1) {
        Ring::sync_empty((i - 1) % kS);
        if constexpr (kOutputs) pr.write(i - 1);
        if constexpr (!Ring::kConvert) {
          Ring::producers_sync();  // its outputs are read before the copies overwrite it
          pr.issue(i - 1 + kS);
        }
      }
      if (i + 1 < nc) {
        pr.ready(i + 1);
        Ring::arrive_full((i + 1) % kS);
      }
    }
    Ring::sync_empty((nc - 1) % kS);
    if constexpr (kOutputs) pr.write(nc - 1);
    return;
  }

  // Compute warps: as the sequential kernel, one chunk per stage.
  const int c = ChunkLanes<Tr>::channel(), s = ChunkLanes<Tr>::split();
  const bool active = c < tile.nd;
  const int d = tile.d0 + (active ? c : 0);
  ChannelStates<Tr> cs;
  cs.load(p, d, s, active);
  AccT h[kPer], aprod[kPer];
  // Segment carries: [2][(b, d, n, segment)] (decay products, then states).
  AccT* carry_a = static_cast<AccT*>(p.carries);
  AccT* carry_b = carry_a + static_cast<long long>(p.batch) * p.dim * Tr::kN * p.segments;
  auto carry = [&](int k) {
    const int n = ChannelStates<Tr>::state(s, k);
    return ((static_cast<long long>(tile.b) * p.dim + d) * Tr::kN + n) * p.segments + seg;
  };
  if constexpr (kPass == PipePass::kWhole) {
    ChannelStates<Tr>::init(p, tile.b, d, s, active, h, aprod);
  } else {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const bool ok = active && ChannelStates<Tr>::state(s, k) < Tr::kN;
      h[k] = kPass == PipePass::kSegmentOutputs && ok ? carry_b[carry(k)] : AccT(0);
      aprod[k] = 1;
    }
  }
  auto sink = make_state_sink(p, tile.b, d, active);
  for (int j = 0; j < nc; ++j) {
    sink.t0 = (j0 + j) * Tr::kChunk;
    const int len = min(Tr::kChunk, p.seqlen - sink.t0);
    Ring::sync_full(j % kS);
    run_chunk<Tr, kOutputs, 2>(cs, h, aprod, c, s, len, Ring::stage(smem, j), l, sink);
    Ring::arrive_empty(j % kS);
  }
  if constexpr (kPass == PipePass::kWhole) {
    ChannelStates<Tr>::store_last(p, tile.b, d, s, active, h);
  } else if constexpr (kPass == PipePass::kSegmentStates) {
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      if (active && ChannelStates<Tr>::state(s, k) < Tr::kN) {
        carry_a[carry(k)] = aprod[k];
        carry_b[carry(k)] = h[k];
      }
    }
  }
}

template <typename Tr>
__global__ void __launch_bounds__(Tr::kThreads + PipeRing<Tr>::kProd, PipeMinBlocks<Tr>::value)
    ssm_fwd_pipelined(const SsmFwdParams p) {
  pipelined_pass<Tr, PipePass::kWhole>(p, 0, p.n_chunks, 0);
}

}  // namespace ssmtune_kernels
