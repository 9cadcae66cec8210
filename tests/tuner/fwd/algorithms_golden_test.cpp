// Golden check of everything the forward algorithms decide on the host: for a
// broad set of problems (every dtype, dstate 1..256, seqlen 1..65536, flags,
// groups, constant B/C) the search space with its pruning reasons, the plan of
// every config (kernel name expressions, launches, grids, blocks, shared
// memory, scratch), legality verdicts over a wide grid of configs, defaults
// and the heuristic choice with its reason, the first-look order and the
// resource pruning. The text is hashed; set SSMTUNE_GOLDEN_DUMP=<file> to
// write it out (to diff against a dump of an older build after a deliberate
// change, then update kGolden).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "core/hash.h"
#include "tuner/fwd/heuristics.h"
#include "tuner/fwd/plan.h"
#include "tuner/fwd/search_space.h"

namespace ssmtune {
namespace {

// The hash of the dump made by the code before the algorithm descriptors
// (with the pipelined kernel's z rows and flag-dependent producer warps,
// which came just before them), updated deliberately since: the split scan,
// then the pipelined default past dstate 16 (four lanes per channel, up to
// 16 states per thread), then the warp scan with several warps a channel
// (its legality, its configs in the space, and the default for at most 64
// channels and 8192 steps), then 16 warps a channel (chunks of 2048: the
// default past 1024 steps there, and one more config in the space; the
// dump's 56 changed heuristic choices are all K1024.t256 -> K2048.t512),
// then the warp scan's state groups (n_split blocks a channel: its legality
// messages, six configs in the space below 1024 channels, their plans and
// first-look places; no default or heuristic choice changed), then their
// state sums' grid over time slices of 1024 steps (only those launch lines),
// then the default's state groups (tuner/state_groups.h: 27 of the dump's
// problems, at most 8 channels and 128 steps or more, change heuristic
// choice, each to the warp scan of 8 or 16 warps over 2 to 8 groups; their
// first-look places move with it), then 4 steps a lane in blocks of 4
// channels at dstate <= 4 from 32 channels per SM (only heuristic lines,
// warpscan.K256.D8.i8 -> K128.D4.i4, 47 problems at 132 SMs, and their
// first-look places changed), then 8 warps over 2 state groups for 65 to
// 128 channels at dstate 9 to 16 up to 2048 steps (5 heuristic lines: 72
// channels at 132 and 108 SMs, 128 channels at 132 SMs with 227 KB of
// shared memory; and their first-look places), then the pipelined kernel
// at 4 threads a channel for dstate 4 and 8 from 20 channels per SM, 1024
// to 4096 steps (12 heuristic lines, all warpscan.K128.D4.i4 at dstate 4 ->
// pipelined.K64.D16.t64.i2.s4, and first-look places), then the block scan
// (an eighth algorithm: its space, plans and legality lines in every
// problem, the random configs' draws over eight algorithms) and its rule for
// 65 channels to 8 an SM at dstate <= 16, 512 to 4096 steps (78 heuristic
// lines, all from split or warpscan to blockscan; no other heuristic line).
// The block scan's 16 steps a lane for half-precision rows at dstate >= 8
// moves no line here (the dump's half-precision problems in that band have
// dstate <= 5). Short sequences (bench/NOTES.md, version 29): the
// pipelined kernel at 64 to 256 steps (512 at dstate 5 to 8) over many
// channels, the warp scan's short lanes from 16 channels per SM at 512 steps
// or fewer and 2 steps a lane at 64 or fewer from dstate 4 (168 heuristic
// lines, all from warpscan, 34 of them to pipelined; 449 first-look lines).
// Where the sequential scan fills the GPU (version 30): 2 pipelined threads a
// channel at dstate 8 to 16, 96 to 384 steps (512 at dstate 8): 33 heuristic
// lines (29 from sequential, 4 from the pipelined kernel's own default) and
// 356 first-look lines. dstate 4 where the sequential scan fills the GPU and
// the ring fills (version 39): 4 pipelined threads a channel, chunks of 32 in
// a ring of 2, not the kernel's own layout (26 heuristic lines, 33
// first-look lines).
constexpr const char* kGolden = "a85212e690f605ff06823df5f22605be";

jit::DeviceInfo device(int sm_count, int max_shared) {
  jit::DeviceInfo d;
  d.name = "golden GPU";
  d.cc_major = 9;
  d.sm_count = sm_count;
  d.max_shared_per_block = max_shared;
  d.registers_per_sm = 65536;
  return d;
}

std::vector<FwdProblem> problems() {
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16};
  const int64_t dstates[] = {1, 2, 3, 4, 5, 8, 16, 24, 32, 64, 128, 256};
  const int64_t seqlens[] = {1, 2, 3, 7, 16, 31, 64, 100, 256, 1000, 2048, 4096, 65536};
  struct Shape {
    int64_t batch, dim, groups;
  };
  const Shape shapes[] = {{1, 8, 1},  {2, 64, 2}, {8, 1536, 1},  {1, 2048, 1}, {4, 5120, 4},
                          {3, 24, 3}, {1, 1, 1},  {70000, 4, 1}, {16, 4096, 8}};
  std::vector<FwdProblem> out;
  int i = 0;
  for (DType t : dtypes)
    for (int64_t n : dstates)
      for (int64_t l : seqlens) {
        FwdProblem p;
        p.dtype = t;
        p.dstate = n;
        p.seqlen = l;
        const Shape& s = shapes[(i * 7) % std::size(shapes)];
        p.batch = s.batch;
        p.dim = s.dim;
        p.groups = s.groups;
        const int f = i % 11;
        p.variable_b = f != 1 && f != 3;
        p.variable_c = f != 2 && f != 3;
        p.has_d = f == 4 || f == 8 || f == 10;
        p.has_z = f == 5 || f == 8 || f == 10;
        p.has_delta_bias = f == 6 || f == 8 || f == 9;
        p.delta_softplus = f == 7 || f == 8 || f == 9;
        p.return_last_state = f == 8 || f == 10;
        p.has_initial_state = f == 9 || f == 10;
        out.push_back(p);
        ++i;
      }
  // Beyond the grid limits: many chunks (multipass's grid z, the look-back's
  // block count).
  for (int64_t l : {int64_t{1} << 18, int64_t{1} << 20, int64_t{1} << 24}) {
    FwdProblem p;
    p.seqlen = l;
    p.dim = 64;
    out.push_back(p);
    p.batch = 60000;
    p.dim = 8192;
    p.dtype = DType::kBF16;
    p.dstate = 64;
    out.push_back(p);
  }
  return out;
}

void dump_plan(std::ostream& o, const FwdProblem& p, const FwdConfig& c, size_t max_shared) {
  auto plan = plan_fwd(p, c, max_shared);
  if (!plan) {
    o << "  plan " << c.key() << " error " << plan.status().message() << "\n";
    return;
  }
  o << "  plan " << c.key() << " chunks " << plan->n_chunks << " carries " << plan->carries_bytes
    << " flags " << plan->flags_bytes << " smem " << plan->max_shared_bytes << "\n";
  for (const auto& k : plan->kernels)
    o << "   kernel " << k.header << " " << k.name_expression << "\n";
  for (const auto& l : plan->launches)
    o << "   launch " << l.kernel << " grid " << l.grid.x << "," << l.grid.y << "," << l.grid.z
      << " block " << l.block.x << "," << l.block.y << "," << l.block.z << " smem "
      << l.shared_bytes << "\n";
}

void dump_resources(std::ostream& o, const FwdProblem& p, const FwdConfig& c,
                    const jit::DeviceInfo& d) {
  auto plan = plan_fwd(p, c);
  if (!plan) return;
  for (int regs : {0, 32, 64, 100, 168, 255}) {
    std::vector<jit::KernelImage> images;
    for (const auto& k : plan->kernels) {
      jit::KernelImage im;
      im.name_expression = k.name_expression;
      im.resources.registers = regs;
      images.push_back(im);
    }
    o << "   regs " << regs << ": " << prune_by_resources(p, c, images, d) << "\n";
  }
  std::vector<jit::KernelImage> spill(1);
  spill[0].resources.registers = 40;
  spill[0].resources.spill_store_bytes = 24;
  o << "   spill: " << prune_by_resources(p, c, spill, d) << "\n";
}

// A wide grid of configs, legal and not, sampled with a fixed generator.
void dump_legality(std::ostream& o, const FwdProblem& p, uint32_t seed) {
  const int chunks[] = {1, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096, 4097};
  const int d_steps[] = {0, 1, 2, 3, 4, 8, 16, 32, 64, 65};
  const int threads[] = {16, 32, 48, 64, 96, 128, 256, 512, 960, 992, 1024, 2048};
  const int items[] = {0, 1, 2, 3, 4, 5, 8, 16, 32, 64, 65};
  const int splits[] = {0, 1, 2, 3, 4, 8, 16, 32, 64};
  struct Exp {
    AccType acc;
    ExpMode mode;
    int share;
  };
  const Exp exps[] = {{AccType::kF32, ExpMode::kFast, 0}, {AccType::kF32, ExpMode::kAccurate, 0},
                      {AccType::kF32, ExpMode::kPoly, 2}, {AccType::kF64, ExpMode::kAccurate, 0},
                      {AccType::kF64, ExpMode::kFast, 0}, {AccType::kF32, ExpMode::kPoly, 0},
                      {AccType::kF32, ExpMode::kFast, 3}, {AccType::kF32, ExpMode::kPoly, 8}};
  const size_t limits[] = {0, 227 * 1024, 99 * 1024, 48 * 1024};
  std::mt19937 rng(seed);
  auto pick = [&rng](const auto& arr) { return arr[rng() % std::size(arr)]; };
  for (int i = 0; i < 3000; ++i) {
    FwdConfig c;
    c.algo = kAllScanAlgos[rng() % std::size(kAllScanAlgos)];
    c.chunk = pick(chunks);
    c.d_step = pick(d_steps);
    c.items = pick(items);
    c.n_split = pick(splits);
    const Exp e = pick(exps);
    c.acc = e.acc;
    c.exp_mode = e.mode;
    c.poly_share = e.share;
    // Bias towards the structured layouts, so the later rules are reached.
    switch (rng() % 4) {
      case 0:
        c.threads = pick(threads);
        break;
      case 1:
        c.threads = c.d_step * c.n_split;
        break;
      case 2:
        c.threads = 32 * c.d_step;
        c.chunk = 32 * c.items;
        c.n_split = 1;
        break;
      default:
        c.threads = pick(threads);
        c.chunk = c.threads * c.items;
        c.n_split = 1;
        break;
    }
    const size_t limit = pick(limits);
    const Status s = check_config(p, c, limit);
    o << "  check " << c.key() << " @" << limit << ": " << (s ? "ok" : s.message()) << "\n";
    if (s && i % 16 == 0) dump_plan(o, p, c, limit);
  }
}

std::string dump_problem(const FwdProblem& p, int index) {
  std::ostringstream o;
  o << "problem " << p.key() << " valid: " << p.validate().message() << "\n";
  const jit::DeviceInfo h200 = device(132, 227 * 1024);
  // The full space on an H200-like device, and the plan of every config.
  const auto space = search_space(p, h200);
  std::vector<FwdConfig> candidates;
  for (const auto& e : space) {
    o << " space " << e.config.key() << " " << (e.pruned ? "pruned: " + e.reason : "ok") << "\n";
    dump_plan(o, p, e.config, h200.max_shared_per_block);
    if (!e.pruned) candidates.push_back(e.config);
    auto parsed = FwdConfig::from_key(e.config.key());
    if (!parsed || !(*parsed == e.config)) o << "  key round trip failed\n";
  }
  // Other devices and options: the space's keys and verdicts.
  const struct {
    int sms, smem;
    bool fp64, poly;
  } variants[] = {
      {108, 163 * 1024, true, false}, {16, 48 * 1024, false, true}, {1, 99 * 1024, false, false}};
  for (const auto& v : variants) {
    SpaceOptions opt;
    opt.include_fp64 = v.fp64;
    opt.include_poly = v.poly;
    for (const auto& e : search_space(p, device(v.sms, v.smem), opt))
      o << " space@" << v.smem << v.fp64 << v.poly << " " << e.config.key() << " "
        << (e.pruned ? "pruned: " + e.reason : "ok") << "\n";
  }
  // Defaults of every algorithm, and the heuristic choice.
  for (size_t limit : {size_t{0}, size_t{227 * 1024}, size_t{99 * 1024}, size_t{48 * 1024}})
    for (ScanAlgo a : kAllScanAlgos)
      for (AccType acc : {AccType::kF32, AccType::kF64}) {
        const FwdConfig c = default_config(p, a, acc, limit);
        o << " default " << to_string(a) << " " << to_string(acc) << " @" << limit << " " << c.key()
          << "\n";
        dump_plan(o, p, c, limit);
      }
  std::string first;
  for (int sms : {132, 108, 16, 1})
    for (int smem : {227 * 1024, 48 * 1024}) {
      const FwdDefaultChoice d = heuristic_default(p, sms, smem);
      o << " heuristic " << sms << " @" << smem << " " << d.config.key() << " (" << d.reason
        << ")\n";
      if (first.empty()) first = d.config.key();
    }
  for (const FwdConfig& c : first_look_order(candidates, first)) o << " first " << c.key() << "\n";
  for (const FwdConfig& c : first_look_order(candidates)) o << " first0 " << c.key() << "\n";
  // Resource pruning of a few configs of each algorithm.
  for (size_t i = 0; i < space.size(); i += 7) {
    o << "  resources " << space[i].config.key() << "\n";
    dump_resources(o, p, space[i].config, h200);
    dump_resources(o, p, space[i].config, device(132, 227 * 1024));
  }
  if (index % 6 == 0 || p.seqlen > 65536) dump_legality(o, p, static_cast<uint32_t>(index + 1));
  return o.str();
}

TEST_CASE("the forward algorithms' host decisions match the golden dump", "[tuner][golden]") {
  Hasher h;
  const char* path = std::getenv("SSMTUNE_GOLDEN_DUMP");
  std::ofstream file;
  if (path != nullptr) file.open(path);
  // Names, and the parse errors that list them.
  std::ostringstream head;
  for (ScanAlgo a : kAllScanAlgos) head << "algo " << to_string(a) << "\n";
  for (const char* bad :
       {"nope", "seq.K64.D8.fp32.t128.i8.s1.fast", "sequential.K64",
        "warpscan.K64.D8.fp16.t128.i8.s1.fast", "blelloch.K64.D8.fp32.t128.i8.s1.poly",
        "lookback.K064.D8.fp32.t128.i8.s1.fast"})
    head << "parse " << bad << ": " << FwdConfig::from_key(bad).status().message() << "\n";
  h.add(head.str());
  if (path != nullptr) file << head.str();
  int index = 0;
  size_t bytes = 0;
  for (const FwdProblem& p : problems()) {
    const std::string text = dump_problem(p, index++);
    bytes += text.size();
    h.add(text);
    if (path != nullptr) file << text;
  }
  INFO(index << " problems, " << bytes << " bytes of dump");
  CHECK(h.hex() == kGolden);
}

}  // namespace
}  // namespace ssmtune
