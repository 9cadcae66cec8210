// Backward problem keys and validation of one backward call's tensors.
#include "tuner/bwd/problem.h"

#include <cstdint>
#include <vector>

#include "tuner/tensor_checks.h"

namespace ssmtune::bwd {
namespace {

constexpr const char* kPrefix = "bwd:";
constexpr const char* kDlastSuffix = ".dlast";

}  // namespace

Status BwdProblem::validate() const {
  SSMTUNE_RETURN_IF_ERROR(fwd.validate());
  if (has_dlast && !fwd.return_last_state)
    return Status::invalid_argument(
        "has_dlast needs return_last_state (a gradient flows in through the last state only "
        "when the forward returns it)");
  return Status::ok();
}

std::string BwdProblem::key() const {
  // The forward's key without its own family prefix.
  return kPrefix + fwd.key().substr(sizeof(kFwdKeyPrefix) - 1) + (has_dlast ? kDlastSuffix : "");
}

Result<BwdProblem> BwdProblem::from_key(const std::string& key) {
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad backward problem key '" + key + "': " + why);
  };
  const std::string prefix = kPrefix, suffix = kDlastSuffix;
  if (key.compare(0, prefix.size(), prefix) != 0) return bad("expected the prefix 'bwd:'");
  std::string body = key.substr(prefix.size());
  BwdProblem p;
  if (body.size() > suffix.size() &&
      body.compare(body.size() - suffix.size(), suffix.size(), suffix) == 0) {
    p.has_dlast = true;
    body.resize(body.size() - suffix.size());
  }
  if (body.compare(0, sizeof(kFwdKeyPrefix) - 1, kFwdKeyPrefix) == 0)
    return bad("the forward's part carries no prefix of its own");
  auto fwd = FwdProblem::from_key(body);
  if (!fwd) return bad(fwd.status().message());
  p.fwd = *fwd;
  if (Status s = p.validate(); !s) return bad(s.message());
  if (p.key() != key) return bad("not in canonical form (expected '" + p.key() + "')");
  return p;
}

double BwdProblem::min_bytes() const {
  const FwdProblem& p = fwd;
  const double es = dtype_bytes(p.dtype);
  const double bdl = double(p.batch) * p.dim * p.seqlen * es;
  const double variable = double(p.batch) * p.groups * p.dstate * p.seqlen * es;
  const double constant = double(p.dim) * p.dstate * 4;
  const double state = double(p.batch) * p.dim * p.dstate * 4;
  double bytes = 3 * bdl + 2 * bdl;                   // u, delta, dout in; du, ddelta out
  if (p.has_z) bytes += 2 * bdl + bdl;                // z, out in; dz out
  bytes += 2 * (p.variable_b ? variable : constant);  // B in, dB out
  bytes += 2 * (p.variable_c ? variable : constant);  // C in, dC out
  bytes += 2 * double(p.dim) * p.dstate * 4;          // A in, dA out
  if (p.has_d) bytes += 2 * double(p.dim) * 4;
  if (p.has_delta_bias) bytes += 2 * double(p.dim) * 4;
  if (p.has_initial_state) bytes += 2 * state;  // h0 in, dh0 out
  if (has_dlast) bytes += state;
  return bytes;
}

bool operator==(const BwdProblem& a, const BwdProblem& b) {
  return a.fwd == b.fwd && a.has_dlast == b.has_dlast;
}

Status validate_bwd_tensors(const BwdProblem& bp, const BwdTensors& t) {
  SSMTUNE_RETURN_IF_ERROR(bp.validate());
  const FwdProblem& p = bp.fwd;
  const DType dt = p.dtype;
  const DType f32 = DType::kF32;
  const DType bdt = p.variable_b ? dt : f32, cdt = p.variable_c ? dt : f32;
  const std::vector<int64_t> bdl = {p.batch, p.dim, p.seqlen};
  const std::vector<int64_t> variable = {p.batch, p.groups, p.dstate, p.seqlen};
  const std::vector<int64_t> constant = {p.dim, p.dstate};
  const std::vector<int64_t> state = {p.batch, p.dim, p.dstate};
  const std::vector<int64_t> vec = {p.dim};
  const auto& bshape = p.variable_b ? variable : constant;
  const auto& cshape = p.variable_c ? variable : constant;
  auto rule = [](const char* name, const TensorArg* arg, bool required, const char* flag,
                 DType dtype, const std::vector<int64_t>& shape, bool output) {
    return TensorRule{name,  arg,     required,
                      flag,  {dtype}, std::string(", expected ") + to_string(dtype),
                      shape, output};
  };
  const std::vector<TensorRule> rules = {
      rule("u", &t.u, true, nullptr, dt, bdl, false),
      rule("delta", &t.delta, true, nullptr, dt, bdl, false),
      rule("A", &t.A, true, nullptr, f32, constant, false),
      rule("B", &t.B, true, nullptr, bdt, bshape, false),
      rule("C", &t.C, true, nullptr, cdt, cshape, false),
      rule("D", &t.D, p.has_d, "has_d", f32, vec, false),
      rule("z", &t.z, p.has_z, "has_z", dt, bdl, false),
      rule("delta_bias", &t.delta_bias, p.has_delta_bias, "has_delta_bias", f32, vec, false),
      rule("h0", &t.h0, p.has_initial_state, "has_initial_state", f32, state, false),
      rule("out", &t.out, p.has_z, "has_z", dt, bdl, false),
      rule("dout", &t.dout, true, nullptr, dt, bdl, false),
      rule("dlast", &t.dlast, bp.has_dlast, "has_dlast", f32, state, false),
      rule("du", &t.du, true, nullptr, dt, bdl, true),
      rule("ddelta", &t.ddelta, true, nullptr, dt, bdl, true),
      rule("dA", &t.dA, true, nullptr, f32, constant, true),
      rule("dB", &t.dB, true, nullptr, bdt, bshape, true),
      rule("dC", &t.dC, true, nullptr, cdt, cshape, true),
      rule("dD", &t.dD, p.has_d, "has_d", f32, vec, true),
      rule("dz", &t.dz, p.has_z, "has_z", dt, bdl, true),
      rule("ddelta_bias", &t.ddelta_bias, p.has_delta_bias, "has_delta_bias", f32, vec, true),
      rule("dh0", &t.dh0, p.has_initial_state, "has_initial_state", f32, state, true),
  };
  for (const TensorRule& r : rules) SSMTUNE_RETURN_IF_ERROR(check_tensor(r));
  // Outputs may overlap nothing: inputs are read after outputs are written.
  return check_no_overlap(rules);
}

}  // namespace ssmtune::bwd
