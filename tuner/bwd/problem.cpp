// Backward problem keys and validation of one backward call's tensors.
#include "tuner/bwd/problem.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace ssmtune::bwd {
namespace {

constexpr const char* kPrefix = "bwd:";
constexpr const char* kDlastSuffix = ".dlast";

std::string shape_string(int rank, const int64_t* shape) {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

struct Expect {
  const char* name;
  const TensorArg* arg;
  bool required;     // present iff this
  const char* flag;  // what decides presence, or nullptr when always required
  DType dtype;
  std::vector<int64_t> shape;
  bool output;
};

Status check_tensor(const Expect& e) {
  const TensorArg& t = *e.arg;
  const std::string name = e.name;
  if (!t.present()) {
    if (!e.required) return Status::ok();
    if (e.flag) return Status::invalid_argument(name + ": required when " + e.flag + " is set");
    return Status::invalid_argument(name + ": required, got a null pointer");
  }
  if (!e.required) return Status::invalid_argument(name + ": given, but " + e.flag + " is not set");
  if (t.dtype != e.dtype)
    return Status::invalid_argument(name + ": dtype " + to_string(t.dtype) + ", expected " +
                                    to_string(e.dtype));
  const int rank = static_cast<int>(e.shape.size());
  const std::string expected = shape_string(rank, e.shape.data());
  if (t.rank < 0 || t.rank > 4)
    return Status::invalid_argument(name + ": expected shape " + expected + ", got rank " +
                                    std::to_string(t.rank));
  bool same = t.rank == rank;
  for (int i = 0; same && i < rank; ++i) same = t.shape[i] == e.shape[i];
  if (!same)
    return Status::invalid_argument(name + ": expected shape " + expected + ", got " +
                                    shape_string(t.rank, t.shape));
  if (t.stride[rank - 1] != 1)
    return Status::invalid_argument(name + ": last dimension must be contiguous (stride 1), got " +
                                    std::to_string(t.stride[rank - 1]));
  for (int i = 0; i < rank - 1; ++i)
    if (t.stride[i] < 1)
      return Status::invalid_argument(name + ": stride of dimension " + std::to_string(i) +
                                      " must be >= 1, got " + std::to_string(t.stride[i]));
  const int bytes = dtype_bytes(t.dtype);
  if (reinterpret_cast<uintptr_t>(t.data) % bytes != 0) {
    char addr[32];
    std::snprintf(addr, sizeof addr, "%p", t.data);
    return Status::invalid_argument(name + ": pointer " + addr + " is not aligned to " +
                                    std::to_string(bytes) + " bytes (the element size)");
  }
  return Status::ok();
}

struct Extent {
  unsigned __int128 lo, hi;
};

Extent extent(const TensorArg& t) {
  unsigned __int128 last = 0;
  for (int i = 0; i < t.rank; ++i)
    last += static_cast<unsigned __int128>(t.shape[i] - 1) * static_cast<uint64_t>(t.stride[i]);
  const unsigned bytes = static_cast<unsigned>(dtype_bytes(t.dtype));
  const unsigned __int128 lo = reinterpret_cast<uintptr_t>(t.data);
  return {lo, lo + last * bytes + bytes - 1};
}

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
  const Expect expects[] = {
      {"u", &t.u, true, nullptr, dt, bdl, false},
      {"delta", &t.delta, true, nullptr, dt, bdl, false},
      {"A", &t.A, true, nullptr, f32, constant, false},
      {"B", &t.B, true, nullptr, bdt, bshape, false},
      {"C", &t.C, true, nullptr, cdt, cshape, false},
      {"D", &t.D, p.has_d, "has_d", f32, vec, false},
      {"z", &t.z, p.has_z, "has_z", dt, bdl, false},
      {"delta_bias", &t.delta_bias, p.has_delta_bias, "has_delta_bias", f32, vec, false},
      {"h0", &t.h0, p.has_initial_state, "has_initial_state", f32, state, false},
      {"out", &t.out, p.has_z, "has_z", dt, bdl, false},
      {"dout", &t.dout, true, nullptr, dt, bdl, false},
      {"dlast", &t.dlast, bp.has_dlast, "has_dlast", f32, state, false},
      {"du", &t.du, true, nullptr, dt, bdl, true},
      {"ddelta", &t.ddelta, true, nullptr, dt, bdl, true},
      {"dA", &t.dA, true, nullptr, f32, constant, true},
      {"dB", &t.dB, true, nullptr, bdt, bshape, true},
      {"dC", &t.dC, true, nullptr, cdt, cshape, true},
      {"dD", &t.dD, p.has_d, "has_d", f32, vec, true},
      {"dz", &t.dz, p.has_z, "has_z", dt, bdl, true},
      {"ddelta_bias", &t.ddelta_bias, p.has_delta_bias, "has_delta_bias", f32, vec, true},
      {"dh0", &t.dh0, p.has_initial_state, "has_initial_state", f32, state, true},
  };
  for (const Expect& e : expects) SSMTUNE_RETURN_IF_ERROR(check_tensor(e));
  // Outputs may overlap nothing: inputs are read after outputs are written.
  for (const Expect& o : expects) {
    if (!o.output || !o.arg->present()) continue;
    const Extent a = extent(*o.arg);
    for (const Expect& other : expects) {
      if (&other == &o || !other.arg->present()) continue;
      if (other.output && &other > &o) continue;  // each pair of outputs once
      const Extent b = extent(*other.arg);
      if (a.lo <= b.hi && b.lo <= a.hi)
        return Status::invalid_argument(std::string(o.name) + ": overlaps " +
                                        (other.output ? "output " : "input ") + other.name);
    }
  }
  return Status::ok();
}

}  // namespace ssmtune::bwd
