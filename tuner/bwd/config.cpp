// Backward configs: keys, legality and search space (the default: defaults.cpp).
#include "tuner/bwd/config.h"

#include <algorithm>
#include <sstream>

#include "core/int_math.h"
#include "ssm/bwd/bwd_params.cuh"
#include "tuner/key_fields.h"
#include "tuner/state_groups.h"

namespace ssmtune::bwd {

BwdConfig warp_scan(int chunk, int channels, int warps, BwdAcc acc, BwdExp exp, int groups) {
  BwdConfig ws;
  ws.algo = BwdAlgo::kWarpScan;
  ws.chunk = chunk;
  ws.d_step = channels;
  ws.n_split = groups;
  ws.threads = 32 * channels * warps;
  ws.acc = acc;
  ws.exp = exp;
  return ws;
}

const char* to_string(BwdAlgo a) {
  switch (a) {
    case BwdAlgo::kSequential:
      return "seq";
    case BwdAlgo::kMultiPass:
      return "mp";
    case BwdAlgo::kWarpScan:
      return "ws";
  }
  return "?";
}

std::string BwdConfig::key() const {
  std::ostringstream os;
  os << to_string(algo) << ".K" << chunk << ".D" << d_step << "."
     << (acc == BwdAcc::kF64 ? "fp64" : "fp32") << ".t" << threads << ".s" << n_split << "."
     << (exp == BwdExp::kFast ? "fast" : "accurate");
  if (algo == BwdAlgo::kMultiPass) os << ".S" << segments;
  if (chan != 1) os << ".c" << chan;
  if (blocks != 0) os << ".b" << blocks;
  return os.str();
}

Result<BwdConfig> BwdConfig::from_key(const std::string& key) {
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad backward config key '" + key + "': " + why);
  };
  const auto f = split_key(key, '.');
  BwdConfig c;
  if (f[0] == "seq") {
    c.algo = BwdAlgo::kSequential;
  } else if (f[0] == "mp") {
    c.algo = BwdAlgo::kMultiPass;
  } else if (f[0] == "ws") {
    c.algo = BwdAlgo::kWarpScan;
  } else {
    return bad("unknown algorithm '" + f[0] + "' (expected seq, mp or ws)");
  }
  const size_t fields = c.algo == BwdAlgo::kMultiPass ? 8 : 7;
  // Optional fields after the fixed ones, in this order: .c<chan>, .b<blocks>.
  size_t next = fields;
  if (f.size() > next && parse_int_field(f[next], "c", c.chan)) ++next;
  if (f.size() > next && parse_int_field(f[next], "b", c.blocks)) ++next;
  if (f.size() < fields || next != f.size())
    return bad("expected " + std::to_string(fields) +
               " dot-separated fields, then optionally .c<chan> and .b<blocks>");
  if (!parse_int_field(f[1], "K", c.chunk)) return bad("field 2 must be K<chunk>");
  if (!parse_int_field(f[2], "D", c.d_step)) return bad("field 3 must be D<d_step>");
  if (f[3] == "fp32") {
    c.acc = BwdAcc::kF32;
  } else if (f[3] == "fp64") {
    c.acc = BwdAcc::kF64;
  } else {
    return bad("field 4 must be fp32 or fp64");
  }
  if (!parse_int_field(f[4], "t", c.threads)) return bad("field 5 must be t<threads>");
  if (!parse_int_field(f[5], "s", c.n_split)) return bad("field 6 must be s<n_split>");
  if (f[6] == "fast") {
    c.exp = BwdExp::kFast;
  } else if (f[6] == "accurate") {
    c.exp = BwdExp::kAccurate;
  } else {
    return bad("field 7 must be fast or accurate");
  }
  if (c.algo == BwdAlgo::kMultiPass && !parse_int_field(f[7], "S", c.segments))
    return bad("field 8 must be S<segments>");
  if (c.key() != key) return bad("not in canonical form (expected '" + c.key() + "')");
  return c;
}

bool operator==(const BwdConfig& a, const BwdConfig& b) { return a.key() == b.key(); }

int scan_warps(const BwdConfig& c) {
  if (c.algo != BwdAlgo::kWarpScan || c.d_step < 1) return 1;
  return std::max(1, c.threads / (32 * c.d_step));
}

int scan_items(const BwdConfig& c) { return c.chunk / (32 * scan_warps(c)); }

size_t shared_bytes(const BwdProblem& p, const BwdConfig& c) {
  const int acc_bytes = c.acc == BwdAcc::kF64 ? 8 : 4;
  const int n = static_cast<int>(p.fwd.dstate);
  const bool var_b = p.fwd.variable_b, var_c = p.fwd.variable_c;
  if (c.algo == BwdAlgo::kWarpScan)
    return sizeof(float) * static_cast<size_t>(ssmtune_kernels::bwd_scan_smem_layout(
                                                   n, c.chunk, c.d_step, scan_warps(c), var_b,
                                                   var_c, acc_bytes, c.n_split)
                                                   .floats);
  return sizeof(float) *
         static_cast<size_t>(ssmtune_kernels::bwd_smem_layout(n, c.chunk, c.d_step, c.n_split,
                                                              var_b, var_c, acc_bytes, c.chan)
                                 .floats);
}

Status check_config(const BwdProblem& p, const BwdConfig& c, size_t max_shared_bytes) {
  auto bad = [&c](const std::string& why) {
    return Status::invalid_argument("backward config " + c.key() + ": " + why);
  };
  if (c.chunk < 4 || c.chunk > ssmtune_kernels::kBwdMaxChunk || c.chunk % 4 != 0)
    return bad("chunk must be a multiple of 4 in [4, " +
               std::to_string(ssmtune_kernels::kBwdMaxChunk) + "]");
  if (c.d_step < 1 || c.d_step > 64) return bad("d_step must be in [1, 64]");
  if (!is_pow2(c.n_split) || c.n_split > 32) return bad("n_split must be a power of 2 <= 32");
  if (c.n_split > p.fwd.dstate) return bad("n_split exceeds dstate");
  if (c.chan != 1 && (c.algo != BwdAlgo::kSequential || (c.chan != 2 && c.chan != 4)))
    return bad("chan (channels a thread) must be 1, or 2 or 4 with the sequential algorithm");
  if (c.algo == BwdAlgo::kWarpScan) {
    if (c.d_step > 32) return bad("warp scan: d_step must be at most 32");
    if (c.threads % (32 * c.d_step) != 0 || !is_pow2(scan_warps(c)))
      return bad("warp scan: threads must be 32 * d_step * warps a channel, a power of 2");
    const int lanes = 32 * scan_warps(c);
    if (c.chunk % lanes != 0 || c.chunk / lanes % 4 != 0 || c.chunk / lanes > 16)
      return bad("warp scan: chunk must be 32 x warps a channel x 4, 8, 12 or 16 steps a lane");
  } else if (c.d_step % c.chan != 0 || c.n_split < c.chan) {
    return bad("chan must divide d_step and be at most n_split");
  } else if (c.threads * c.chan != c.d_step * c.n_split) {
    return bad("threads must equal d_step * n_split / chan");
  }
  if (c.threads < 32 || c.threads % 32 != 0 || c.threads > 1024)
    return bad("threads must be a multiple of 32 in [32, 1024]");
  if (c.acc == BwdAcc::kF64 && c.exp != BwdExp::kAccurate)
    return bad("fp64 accumulation needs the accurate exp");
  if (c.algo != BwdAlgo::kMultiPass && c.segments != 1)
    return bad("segments must be 1 (sequential, warp scan)");
  if (c.algo == BwdAlgo::kMultiPass && (c.segments < 2 || c.segments > 65535))
    return bad("multipass: segments must be in [2, 65535] (grid z)");
  if (c.blocks < 0 || int64_t{c.blocks} * c.threads > 2048)
    return bad("blocks must be in [1, 2048 / threads] (0: the default)");
  if (p.fwd.batch > 65535) return bad("batch above 65535 (grid y)");
  if (c.algo == BwdAlgo::kWarpScan &&
      ssmtune_kernels::bwd_state_sum_slices(p.fwd.seqlen, c.n_split) > 65535)
    return bad(
        "warp scan over state groups: seqlen past 65535 time slices (the state sum's grid z)");
  const int64_t n_chunks = (p.fwd.seqlen + c.chunk - 1) / c.chunk;
  if (c.algo == BwdAlgo::kMultiPass && n_chunks < 2)
    return bad("multipass: needs at least 2 chunks (one segment otherwise)");
  if (n_chunks * c.chunk > (int64_t{1} << 31) - 1) return bad("seqlen too long for int timesteps");
  const size_t smem = shared_bytes(p, c);
  if (max_shared_bytes != 0 && smem > max_shared_bytes)
    return bad("needs " + std::to_string(smem) + " bytes of shared memory, the device allows " +
               std::to_string(max_shared_bytes));
  return Status::ok();
}

int rule_blocks(const BwdProblem& p, const BwdConfig& c) {
  if (c.acc == BwdAcc::kF64) return 1;
  const int64_t chains = (p.fwd.dstate + c.n_split - 1) / c.n_split * c.chan;
  const bool scan = c.algo == BwdAlgo::kWarpScan;
  const int resident = scan || (chains <= 4 && c.threads >= 128) ? 512 : 256;
  return std::max(1, resident / c.threads);
}

std::vector<BwdConfig> search_space(const BwdProblem& p, size_t max_shared_bytes) {
  std::vector<BwdConfig> out;
  for (int chunk : {8, 16, 32})
    for (int s = 1; s <= 32 && s <= p.fwd.dstate; s *= 2)
      for (int warps : {1, 2, 4}) {
        if (int64_t{s} * 8 < p.fwd.dstate && s < 32) continue;  // over 8 states per thread: spills
        if (s > 1 && int64_t{s} * 2 > p.fwd.dstate) continue;   // under 2 states per thread
        BwdConfig c;
        c.chunk = chunk;
        c.n_split = s;
        c.threads = 32 * warps;
        c.d_step = c.threads / s;
        if (check_config(p, c, max_shared_bytes).is_ok()) out.push_back(c);
      }
  // The default first (what an untuned call runs), then its accurate-exp twin.
  const BwdConfig def = default_config(p, BwdAcc::kF32, max_shared_bytes).config;
  auto add = [&](const BwdConfig& c) {
    if (std::find(out.begin(), out.end(), c) == out.end() &&
        check_config(p, c, max_shared_bytes).is_ok())
      out.push_back(c);
  };
  out.erase(std::remove(out.begin(), out.end(), def), out.end());
  if (check_config(p, def, max_shared_bytes).is_ok()) out.insert(out.begin(), def);
  BwdConfig acc = def;
  acc.exp = BwdExp::kAccurate;
  add(acc);
  // The default's block at 3 resident blocks per SM instead of the rule's 4
  // (more registers; pays when the grid is under one wave).
  if (rule_blocks(p, def) == 4) {
    BwdConfig three = def;
    three.blocks = 3;
    add(three);
  }
  // The default's sequential block with 2 channels a thread: the same
  // channels on half the threads, and twice the channels on as many (each
  // lane's dB/dC values cover two channels before the lane reductions).
  if (def.algo == BwdAlgo::kSequential && def.chan == 1) {
    BwdConfig two = def;
    two.chan = 2;
    two.blocks = 0;
    two.threads = def.threads / 2;
    add(two);
    two.d_step = def.d_step * 2;
    two.threads = def.threads;
    add(two);
  }
  // Warp scan: chunks of 128 and 256 timesteps, 2 to 8 channels a block
  // (time-parallel: what fills the GPU when few channels leave the chunked
  // kernels' grids small).
  for (int chunk : {128, 256})
    for (int channels : {2, 4, 8}) add(warp_scan(chunk, channels, 1));
  // Warp scan with 2 to 8 warps a channel (chunks of 128 to 1024 timesteps
  // scanned by one block; 16 below): where there are too few channels for a warp each
  // to fill the GPU.
  if (p.fwd.batch * p.fwd.dim < kFewChannels)
    for (int warps : {2, 4, 8})
      for (int channels : {1, 2, 4})
        for (int items : {4, 8})
          if (32 * channels * warps <= 512 && 32 * warps * items <= 1024)
            add(warp_scan(32 * warps * items, channels, warps));
  // 16 warps of 4 steps (one channel, a chunk of 2048) past 1024 steps.
  if (p.fwd.batch * p.fwd.dim < kFewChannels && p.fwd.seqlen > 1024) add(warp_scan(2048, 1, 16));
  // A channel's states over 2 to 8 blocks (state groups; at 8 and 16 warps
  // a channel): the per-state chains of few channels on that many more SMs,
  // each block staging only its states' B/C rows (so 16 warps fit at dstate
  // 16), then a pass that sums the groups' du and ddelta terms.
  if (p.fwd.batch * p.fwd.dim < kFewChannels)
    for (int warps : {8, 16})
      for (int groups : {2, 4, 8})
        if (groups <= p.fwd.dstate && (warps == 8 || p.fwd.seqlen > 1024))
          add(warp_scan(128 * warps, 1, warps, BwdAcc::kF32, BwdExp::kFast, groups));
  // Multipass: the default's block (chunk 16 and 8) over 2 to 256 segments
  // of at least 2 chunks (fewer channels than SMs' worth of blocks leaves
  // most of the GPU idle without them; the best count depends on the shape).
  for (int chunk : {def.chunk, 8})
    for (int segments = 2; segments <= 256; segments *= 2) {
      BwdConfig mp = def;
      mp.chunk = chunk;
      mp.algo = BwdAlgo::kMultiPass;
      mp.segments = segments;
      const int64_t n_chunks = (p.fwd.seqlen + chunk - 1) / chunk;
      if (n_chunks >= 2 * int64_t{segments}) add(mp);
    }
  return out;
}

}  // namespace ssmtune::bwd
