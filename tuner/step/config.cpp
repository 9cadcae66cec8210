// Decode-step configs: keys, legality, search space, default.
#include "tuner/step/config.h"

#include <algorithm>
#include <sstream>

#include "core/int_math.h"
#include "tuner/key_fields.h"

namespace ssmtune::step {
namespace {

int64_t blocks_of(const StepProblem& p, const StepConfig& c) {
  return (p.headdim + c.d_step - 1) / c.d_step * p.heads * p.batch;
}

}  // namespace

std::string StepConfig::key() const {
  std::ostringstream os;
  os << "step.D" << d_step << ".L" << lanes << ".V" << vec << "."
     << (acc == StepAcc::kF64 ? "fp64" : "fp32");
  return os.str();
}

Result<StepConfig> StepConfig::from_key(const std::string& key) {
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad step config key '" + key + "': " + why);
  };
  const auto f = split_key(key, '.');
  if (f.size() != 5 || f[0] != "step")
    return bad("expected step.D<channels>.L<lanes>.V<vec>.<fp32|fp64>");
  StepConfig c;
  if (!parse_int_field(f[1], "D", c.d_step)) return bad("field 2 must be D<channels per block>");
  if (!parse_int_field(f[2], "L", c.lanes)) return bad("field 3 must be L<lanes per channel>");
  if (!parse_int_field(f[3], "V", c.vec)) return bad("field 4 must be V<states per vector>");
  if (f[4] == "fp32") {
    c.acc = StepAcc::kF32;
  } else if (f[4] == "fp64") {
    c.acc = StepAcc::kF64;
  } else {
    return bad("field 5 must be fp32 or fp64");
  }
  if (c.key() != key) return bad("not in canonical form (expected '" + c.key() + "')");
  return c;
}

bool operator==(const StepConfig& a, const StepConfig& b) { return a.key() == b.key(); }

Status check_config(const StepProblem& p, const StepConfig& c) {
  auto bad = [&c](const std::string& why) {
    return Status::invalid_argument("config " + c.key() + ": " + why);
  };
  if (!is_pow2(c.lanes) || c.lanes > 32) return bad("lanes must be a power of two in [1, 32]");
  if (c.vec != 1 && c.vec != 2 && c.vec != 4 && c.vec != 8) return bad("vec must be 1, 2, 4 or 8");
  if (c.vec * dtype_bytes(p.state_dtype) > 16)
    return bad("a vector of " + std::to_string(c.vec) + " " + to_string(p.state_dtype) +
               " states is over 16 bytes");
  if (c.d_step < 1 || c.d_step > 1024) return bad("channels per block must be in [1, 1024]");
  if (c.threads() % 32 != 0 || c.threads() > 1024)
    return bad("threads (channels x lanes = " + std::to_string(c.threads()) +
               ") must be a multiple of 32, at most 1024");
  if (c.passes(p.dstate) > 16)
    return bad(std::to_string(c.passes(p.dstate)) + " passes over dstate " +
               std::to_string(p.dstate) + " (at most 16)");
  return Status::ok();
}

std::vector<StepConfig> search_space(const StepProblem& p) {
  std::vector<StepConfig> out;
  for (int lanes = 1; lanes <= 32; lanes *= 2)
    for (int vec : {1, 2, 4, 8})
      for (int threads : {64, 128, 256}) {
        StepConfig c;
        c.lanes = lanes;
        c.vec = vec;
        c.d_step = threads / lanes;
        if (c.d_step < 1) continue;
        if (int64_t{lanes - 1} * vec >= p.dstate) continue;             // a lane without states
        if (c.d_step > pow2_ceil(p.headdim) && c.d_step > 1) continue;  // idle channels
        if (c.passes(p.dstate) > 8) continue;
        if (check_config(p, c)) out.push_back(c);
      }
  StepConfig anchor = default_config(p).config;
  anchor.acc = StepAcc::kF64;
  out.push_back(anchor);
  return out;
}

StepDefault default_config(const StepProblem& p, StepAcc acc, int sm_count) {
  StepConfig c;
  c.acc = acc;
  const int bytes = dtype_bytes(p.state_dtype);
  c.vec = std::min<int>(16 / bytes, pow2_floor(p.dstate));
  c.lanes = static_cast<int>(std::min<int64_t>(32, pow2_ceil((p.dstate + c.vec - 1) / c.vec)));
  c.d_step = 128 / c.lanes;
  std::string why = std::to_string(c.vec * bytes) + "-byte state vectors, " +
                    std::to_string(c.lanes) + " lanes a channel (" +
                    std::to_string(c.passes(p.dstate)) + " pass" +
                    (c.passes(p.dstate) > 1 ? "es" : "") + " over dstate " +
                    std::to_string(p.dstate) + "), 128 threads";
  if (sm_count > 0 && blocks_of(p, c) < 2 * int64_t{sm_count} && c.threads() > 32 && c.d_step > 1) {
    c.d_step /= 2;
    why += "; 64 threads: " + std::to_string(blocks_of(p, c) / 2) + " blocks of 128 would fill " +
           std::to_string(sm_count) + " SMs less than twice";
  }
  return {c, why};
}

}  // namespace ssmtune::step
