// Decode-step problem keys and validation of one call's tensors.
#include "tuner/step/problem.h"

#include <cstdio>
#include <sstream>
#include <vector>

#include "tuner/key_fields.h"
#include "tuner/tensor_checks.h"

namespace ssmtune::step {
namespace {

constexpr KeyFlag<StepProblem> kFlags[] = {
    {"D", &StepProblem::has_d},          {"z", &StepProblem::has_z},
    {"bias", &StepProblem::has_dt_bias}, {"sp", &StepProblem::softplus},
    {"idx", &StepProblem::has_indices},
};

}  // namespace

Status StepProblem::validate() const {
  for (auto [name, v] : {std::pair<const char*, int64_t>{"batch", batch},
                         {"heads", heads},
                         {"headdim", headdim},
                         {"groups", groups}}) {
    if (v < 1)
      return Status::invalid_argument(std::string(name) + " must be >= 1 (got " +
                                      std::to_string(v) + ")");
    if (v > kMaxSize)
      return Status::invalid_argument(std::string(name) +
                                      " must be <= " + std::to_string(kMaxSize) + " (got " +
                                      std::to_string(v) + ")");
  }
  if (batch > kMaxStepBatch)
    return Status::invalid_argument("batch must be <= " + std::to_string(kMaxStepBatch) +
                                    " (the grid's y dimension; got " + std::to_string(batch) + ")");
  if (dstate < 1 || dstate > kMaxDstate)
    return Status::invalid_argument("dstate must be in [1, " + std::to_string(kMaxDstate) +
                                    "] (got " + std::to_string(dstate) + ")");
  if (heads % groups != 0)
    return Status::invalid_argument("heads (" + std::to_string(heads) +
                                    ") is not divisible by groups (" + std::to_string(groups) +
                                    ")");
  int64_t n;
  if (!checked_product({heads, headdim}, n) || n > kMaxSize)
    return Status::invalid_argument("heads * headdim (" + std::to_string(heads) + " * " +
                                    std::to_string(headdim) +
                                    ") must be <= " + std::to_string(kMaxSize));
  if (!checked_product({batch, heads, headdim, dstate, 8}, n))
    return Status::invalid_argument(
        "batch * heads * headdim * dstate overflows 64-bit byte counts");
  for (DType t : {dtype, state_dtype})
    if (t != DType::kF32 && t != DType::kF16 && t != DType::kBF16)
      return Status::invalid_argument("dtype " + std::to_string(static_cast<int>(t)) +
                                      " is not fp32, fp16 or bf16");
  return Status::ok();
}

std::string StepProblem::key() const {
  std::ostringstream os;
  os << kStepKeyPrefix << "b" << batch << ".h" << heads << ".p" << headdim << ".n" << dstate << ".g"
     << groups << "." << to_string(dtype) << ".s" << to_string(state_dtype)
     << flags_suffix(kFlags, *this);
  return os.str();
}

Result<StepProblem> StepProblem::from_key(const std::string& key) {
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad step problem key '" + key + "': " + why);
  };
  const std::string prefix = kStepKeyPrefix;
  if (key.compare(0, prefix.size(), prefix) != 0) return bad("expected the prefix 'step:'");
  const auto f = split_key(key.substr(prefix.size()), '.');
  if (f.size() < 7)
    return bad("expected at least 7 dot-separated fields (b.h.p.n.g.dtype.s<state dtype>)");
  StepProblem p;
  const char prefixes[] = {'b', 'h', 'p', 'n', 'g'};
  int64_t* const sizes[] = {&p.batch, &p.heads, &p.headdim, &p.dstate, &p.groups};
  if (std::string why = parse_size_fields(f, prefixes, sizes); !why.empty()) return bad(why);
  auto dt = parse_dtype(f[5]);
  if (!dt) return bad(dt.status().message());
  p.dtype = *dt;
  if (f[6].size() < 2 || f[6][0] != 's') return bad("field 7 must be s<state dtype>");
  auto st = parse_dtype(f[6].substr(1));
  if (!st) return bad(st.status().message());
  p.state_dtype = *st;
  for (size_t i = 7; i < f.size(); ++i)
    if (std::string why = set_flag(kFlags, f[i], p); !why.empty()) return bad(why);
  if (Status s = p.validate(); !s) return bad(s.message());
  if (p.key() != key) return bad("not in canonical form (expected '" + p.key() + "')");
  return p;
}

std::string StepProblem::class_key() const {
  return std::string(to_string(dtype)) + ".s" + to_string(state_dtype) + ".n" +
         std::to_string(dstate) + flags_suffix(kFlags, *this);
}

double StepProblem::min_bytes() const {
  const double es = dtype_bytes(dtype);
  const double bhp = double(batch) * dim();
  double bytes = 2 * bhp * double(dstate) * dtype_bytes(state_dtype);  // state in and out
  bytes += double(dim()) * dstate * 4;                                 // A
  bytes += 3 * bhp * es;                                               // x, dt, out
  bytes += 2 * double(batch) * groups * dstate * es;                   // B, C
  if (has_z) bytes += bhp * es;
  if (has_d) bytes += double(dim()) * 4;
  if (has_dt_bias) bytes += double(dim()) * 4;
  return bytes;
}

bool operator==(const StepProblem& a, const StepProblem& b) { return a.key() == b.key(); }

TensorArg index_words(const IndexArg& ix) {
  TensorArg w;
  w.data = ix.data;
  if (!ix.present()) return w;
  w.dtype = DType::kF32;
  w.rank = 1;
  w.shape[0] = ix.size * (ix.bytes / 4);
  w.stride[0] = 1;
  return w;
}

Status validate_step_tensors(const StepProblem& p, const StepTensors& t) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  const DType dt = p.dtype, f32 = DType::kF32;
  const std::string in_hint = ", expected the input dtype " + std::string(to_string(dt));
  const std::string f32_hint = ", expected fp32";
  const std::string weight_hint =
      ", expected fp32 or the input dtype " + std::string(to_string(dt));
  const std::string state_hint =
      ", expected the state dtype " + std::string(to_string(p.state_dtype));
  const int64_t rows = t.state.present() && t.state.rank == 4 ? t.state.shape[0] : p.batch;
  const std::vector<int64_t> state = {p.has_indices ? rows : p.batch, p.heads, p.headdim, p.dstate};
  const std::vector<int64_t> bhp = {p.batch, p.heads, p.headdim};
  const std::vector<int64_t> hpn = {p.heads, p.headdim, p.dstate};
  const std::vector<int64_t> bgn = {p.batch, p.groups, p.dstate};
  const std::vector<int64_t> hp = {p.heads, p.headdim};
  const std::vector<TensorRule> rules = {
      {"state", &t.state, true, nullptr, {p.state_dtype}, state_hint, state, true, true},
      {"x", &t.x, true, nullptr, {dt}, in_hint, bhp, false, true},
      {"dt", &t.dt, true, nullptr, {dt}, in_hint, bhp, false, true},
      {"A", &t.A, true, nullptr, {f32}, f32_hint, hpn, false, true},
      {"B", &t.B, true, nullptr, {dt}, in_hint, bgn, false, true},
      {"C", &t.C, true, nullptr, {dt}, in_hint, bgn, false, true},
      {"D", &t.D, p.has_d, "has_d", {f32, dt}, weight_hint, hp, false, true},
      {"z", &t.z, p.has_z, "has_z", {dt}, in_hint, bhp, false, true},
      {"dt_bias",
       &t.dt_bias,
       p.has_dt_bias,
       "has_dt_bias",
       {f32, dt},
       weight_hint,
       hp,
       false,
       true},
      {"out", &t.out, true, nullptr, {dt}, in_hint, bhp, true, true},
  };
  for (const TensorRule& r : rules) SSMTUNE_RETURN_IF_ERROR(check_tensor(r));
  if (rows < 1) return Status::invalid_argument("state: needs at least one row");
  const IndexArg& ix = t.state_indices;
  if (ix.present() != p.has_indices)
    return Status::invalid_argument(ix.present()
                                        ? "state_indices: given, but has_indices is not set"
                                        : "state_indices: required when has_indices is set");
  if (ix.present()) {
    if (ix.bytes != 4 && ix.bytes != 8)
      return Status::invalid_argument("state_indices: expected int32 or int64, got " +
                                      std::to_string(ix.bytes) + "-byte elements");
    if (ix.size != p.batch)
      return Status::invalid_argument("state_indices: expected shape (" + std::to_string(p.batch) +
                                      "), got (" + std::to_string(ix.size) + ")");
    if (ix.stride != 1 && ix.size > 1)
      return Status::invalid_argument("state_indices: must be contiguous (stride 1), got " +
                                      std::to_string(ix.stride));
    if (reinterpret_cast<uintptr_t>(ix.data) % static_cast<uintptr_t>(ix.bytes) != 0) {
      char addr[32];
      std::snprintf(addr, sizeof addr, "%p", ix.data);
      return Status::invalid_argument(std::string("state_indices: pointer ") + addr +
                                      " is not aligned to " + std::to_string(ix.bytes) + " bytes");
    }
  }
  const TensorArg words = index_words(ix);
  std::vector<TensorRule> all = rules;
  if (ix.present())
    all.push_back({"state_indices", &words, true, nullptr, {f32}, "", {}, false, true});
  return check_no_overlap(all);
}

}  // namespace ssmtune::step
