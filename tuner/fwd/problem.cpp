// FwdProblem validation, keys and traffic, and the check of one call's device
// tensors against its problem.
#include "tuner/fwd/problem.h"

#include <sstream>
#include <utility>
#include <vector>

#include "tuner/key_fields.h"
#include "tuner/tensor_checks.h"

namespace ssmtune {
namespace {

// The optional flags in key order: (name in the key, member).
constexpr KeyFlag<FwdProblem> kFlags[] = {
    {"vB", &FwdProblem::variable_b},
    {"vC", &FwdProblem::variable_c},
    {"D", &FwdProblem::has_d},
    {"z", &FwdProblem::has_z},
    {"bias", &FwdProblem::has_delta_bias},
    {"sp", &FwdProblem::delta_softplus},
    {"last", &FwdProblem::return_last_state},
    {"h0", &FwdProblem::has_initial_state},
};

}  // namespace

Status FwdProblem::validate() const {
  auto at_least_1 = [](const char* name, int64_t v) {
    if (v >= 1) return Status::ok();
    return Status::invalid_argument(std::string(name) + " must be >= 1 (got " + std::to_string(v) +
                                    ")");
  };
  SSMTUNE_RETURN_IF_ERROR(at_least_1("batch", batch));
  SSMTUNE_RETURN_IF_ERROR(at_least_1("dim", dim));
  SSMTUNE_RETURN_IF_ERROR(at_least_1("seqlen", seqlen));
  if (dstate < 1 || dstate > kMaxDstate)
    return Status::invalid_argument("dstate must be in [1, " + std::to_string(kMaxDstate) +
                                    "] (got " + std::to_string(dstate) + ")");
  SSMTUNE_RETURN_IF_ERROR(at_least_1("groups", groups));
  // The kernels' params (ssm/fwd_params.cuh) hold the sizes as 32-bit ints.
  for (auto [name, v] : {std::pair<const char*, int64_t>{"batch", batch},
                         {"dim", dim},
                         {"seqlen", seqlen},
                         {"groups", groups}})
    if (v > kMaxSize)
      return Status::invalid_argument(
          std::string(name) + " must be <= " + std::to_string(kMaxSize) +
          " (the kernels take 32-bit sizes; got " + std::to_string(v) + ")");
  if (!variable_b && !variable_c && groups != 1)
    return Status::invalid_argument("groups must be 1 when B and C are both constant (got " +
                                    std::to_string(groups) + ")");
  if (dim % groups != 0)
    return Status::invalid_argument("dim (" + std::to_string(dim) +
                                    ") is not divisible by groups (" + std::to_string(groups) +
                                    ")");
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    return Status::invalid_argument("dtype " + std::to_string(static_cast<int>(dtype)) +
                                    " is not fp32, fp16 or bf16");
  // Element counts of the largest tensors, and the largest byte count, must
  // fit int64 (8 bytes an element covers the host's fp64 copies too).
  int64_t n;
  if (!checked_product({batch, dim, seqlen, 8}, n))
    return Status::invalid_argument("batch * dim * seqlen (" + std::to_string(batch) + " * " +
                                    std::to_string(dim) + " * " + std::to_string(seqlen) +
                                    ") overflows 64-bit byte counts");
  if (!checked_product({batch, groups, dstate, seqlen, 8}, n))
    return Status::invalid_argument("batch * groups * dstate * seqlen (" + std::to_string(batch) +
                                    " * " + std::to_string(groups) + " * " +
                                    std::to_string(dstate) + " * " + std::to_string(seqlen) +
                                    ") overflows 64-bit byte counts");
  if (!checked_product({batch, dim, dstate, 8}, n))
    return Status::invalid_argument("batch * dim * dstate (" + std::to_string(batch) + " * " +
                                    std::to_string(dim) + " * " + std::to_string(dstate) +
                                    ") overflows 64-bit byte counts");
  return Status::ok();
}

std::string FwdProblem::key() const {
  std::ostringstream os;
  os << kFwdKeyPrefix << "b" << batch << ".d" << dim << ".l" << seqlen << ".n" << dstate << ".g"
     << groups << "." << to_string(dtype) << flags_suffix(kFlags, *this);
  return os.str();
}

Result<FwdProblem> FwdProblem::from_key(const std::string& key) {
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad problem key '" + key + "': " + why);
  };
  // Keys written before families existed carry no prefix.
  const std::string prefix = kFwdKeyPrefix;
  const bool prefixed = key.compare(0, prefix.size(), prefix) == 0;
  const std::string body = prefixed ? key.substr(prefix.size()) : key;
  const auto f = split_key(body, '.');
  if (f.size() < 6) return bad("expected at least 6 dot-separated fields (b.d.l.n.g.dtype)");
  FwdProblem p;
  const char prefixes[] = {'b', 'd', 'l', 'n', 'g'};
  int64_t* const sizes[] = {&p.batch, &p.dim, &p.seqlen, &p.dstate, &p.groups};
  if (std::string why = parse_size_fields(f, prefixes, sizes); !why.empty()) return bad(why);
  auto dt = parse_dtype(f[5]);
  if (!dt) return bad(dt.status().message());
  p.dtype = *dt;
  for (const KeyFlag<FwdProblem>& flag : kFlags) p.*flag.member = false;
  for (size_t i = 6; i < f.size(); ++i)
    if (std::string why = set_flag(kFlags, f[i], p); !why.empty()) return bad(why);
  if (p.key() != prefix + body) return bad("not in canonical form (expected '" + p.key() + "')");
  if (Status s = p.validate(); !s) return bad(s.message());
  return p;
}

std::string FwdProblem::family_key() const {
  return std::string(to_string(dtype)) + flags_suffix(kFlags, *this);
}

double FwdProblem::min_bytes() const {
  const double es = dtype_bytes(dtype);
  const double bdl = double(batch) * dim * seqlen;
  const double variable = double(batch) * groups * dstate * seqlen * es;
  const double constant = double(dim) * dstate * 4;
  const double state = double(batch) * dim * dstate * 4;
  double bytes = 3 * bdl * es;       // u, delta, out
  if (has_z) bytes += 2 * bdl * es;  // z, out_z
  bytes += variable_b ? variable : constant;
  bytes += variable_c ? variable : constant;
  bytes += double(dim) * dstate * 4;  // A
  if (has_d) bytes += double(dim) * 4;
  if (has_delta_bias) bytes += double(dim) * 4;
  if (has_initial_state) bytes += state;
  if (return_last_state) bytes += state;
  return bytes;
}

bool operator==(const FwdProblem& a, const FwdProblem& b) {
  return a.batch == b.batch && a.dim == b.dim && a.seqlen == b.seqlen && a.dstate == b.dstate &&
         a.groups == b.groups && a.dtype == b.dtype && a.variable_b == b.variable_b &&
         a.variable_c == b.variable_c && a.has_d == b.has_d && a.has_z == b.has_z &&
         a.has_delta_bias == b.has_delta_bias && a.delta_softplus == b.delta_softplus &&
         a.return_last_state == b.return_last_state && a.has_initial_state == b.has_initial_state;
}

Status validate_fwd_tensors(const FwdProblem& p, const FwdTensors& t) {
  SSMTUNE_RETURN_IF_ERROR(p.validate());
  const DType dt = p.dtype;
  const DType f32 = DType::kF32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  const std::vector<int64_t> variable = {p.batch, p.groups, p.dstate, p.seqlen};
  const std::vector<int64_t> constant = {p.dim, p.dstate};
  const std::vector<int64_t> state = {p.batch, p.dim, p.dstate};
  const std::vector<int64_t> vec = {p.dim};
  const std::string mismatch = " does not match the problem's " + std::string(to_string(dt));
  const std::string fp32 = ", expected fp32 (always fp32)";
  auto rule = [&](const char* name, const TensorArg* arg, bool required, const char* flag,
                  bool problem_dtype, const std::vector<int64_t>& shape, bool output) {
    return TensorRule{
        name,  arg,   required, flag, {problem_dtype ? dt : f32}, problem_dtype ? mismatch : fp32,
        shape, output};
  };
  const std::vector<TensorRule> rules = {
      rule("u", &t.u, true, nullptr, true, bdl, false),
      rule("delta", &t.delta, true, nullptr, true, bdl, false),
      rule("A", &t.A, true, nullptr, false, constant, false),
      rule("B", &t.B, true, nullptr, p.variable_b, p.variable_b ? variable : constant, false),
      rule("C", &t.C, true, nullptr, p.variable_c, p.variable_c ? variable : constant, false),
      rule("D", &t.D, p.has_d, "has_d", false, vec, false),
      rule("z", &t.z, p.has_z, "has_z", true, bdl, false),
      rule("delta_bias", &t.delta_bias, p.has_delta_bias, "has_delta_bias", false, vec, false),
      rule("h0", &t.h0, p.has_initial_state, "has_initial_state", false, state, false),
      rule("out", &t.out, true, nullptr, true, bdl, true),
      rule("out_z", &t.out_z, p.has_z, "has_z", true, bdl, true),
      rule("last_state", &t.last_state, p.return_last_state, "return_last_state", false, state,
           true),
  };
  for (const TensorRule& r : rules) SSMTUNE_RETURN_IF_ERROR(check_tensor(r));
  // Outputs may not overlap inputs or each other: the kernels read inputs
  // after writing outputs of earlier chunks.
  return check_no_overlap(rules);
}

}  // namespace ssmtune
