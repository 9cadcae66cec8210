// FwdProblem validation, keys and traffic, and the check of one call's device
// tensors against its problem.
#include "tuner/fwd/problem.h"

#include <cstdio>
#include <initializer_list>
#include <sstream>
#include <utility>
#include <vector>

namespace ssmtune {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// "b8" with prefix 'b' -> 8; digits only (the canonical check rejects "b08").
bool parse_size(const std::string& f, char prefix, int64_t& out) {
  if (f.size() < 2 || f.size() > 20 || f[0] != prefix) return false;
  int64_t v = 0;
  for (size_t i = 1; i < f.size(); ++i) {
    if (f[i] < '0' || f[i] > '9') return false;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, f[i] - '0', &v))
      return false;
  }
  out = v;
  return true;
}

// The product of `factors`, or false when it does not fit int64.
bool checked_product(std::initializer_list<int64_t> factors, int64_t& out) {
  int64_t p = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p)) return false;
  out = p;
  return true;
}

// The optional flags in key order: (name in the key, member).
struct FlagField {
  const char* name;
  bool FwdProblem::*member;
};
constexpr FlagField kFlags[] = {
    {"vB", &FwdProblem::variable_b},
    {"vC", &FwdProblem::variable_c},
    {"D", &FwdProblem::has_d},
    {"z", &FwdProblem::has_z},
    {"bias", &FwdProblem::has_delta_bias},
    {"sp", &FwdProblem::delta_softplus},
    {"last", &FwdProblem::return_last_state},
    {"h0", &FwdProblem::has_initial_state},
};

std::string flags_suffix(const FwdProblem& p) {
  std::string s;
  for (const FlagField& f : kFlags)
    if (p.*f.member) s += std::string(".") + f.name;
  return s;
}

std::string shape_string(int rank, const int64_t* shape) {
  std::string s = "(";
  for (int i = 0; i < rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + ")";
}

// What one tensor argument must look like.
struct Expect {
  const char* name;
  const TensorArg* arg;
  bool required;     // present iff this
  const char* flag;  // the flag that decides presence, or nullptr when always required
  DType dtype;
  bool problem_dtype;  // dtype follows the problem (else always fp32)
  std::vector<int64_t> shape;
  bool output;
};

Status check_tensor(const Expect& e, const FwdProblem& p) {
  const TensorArg& t = *e.arg;
  const std::string name = e.name;
  if (!t.present()) {
    if (!e.required) return Status::ok();
    if (e.flag) return Status::invalid_argument(name + ": required when " + e.flag + " is set");
    return Status::invalid_argument(name + ": required, got a null pointer");
  }
  if (!e.required) return Status::invalid_argument(name + ": given, but " + e.flag + " is not set");
  if (t.dtype != e.dtype) {
    if (e.problem_dtype)
      return Status::invalid_argument(name + ": dtype " + to_string(t.dtype) +
                                      " does not match the problem's " + to_string(p.dtype));
    return Status::invalid_argument(name + ": dtype " + to_string(t.dtype) + ", expected " +
                                    to_string(e.dtype) + " (always fp32)");
  }
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

// Byte interval [lo, hi] a (validated, present) tensor may touch.
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
     << groups << "." << to_string(dtype) << flags_suffix(*this);
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
  const auto f = split(body, '.');
  if (f.size() < 6) return bad("expected at least 6 dot-separated fields (b.d.l.n.g.dtype)");
  FwdProblem p;
  const char prefixes[] = {'b', 'd', 'l', 'n', 'g'};
  int64_t* sizes[] = {&p.batch, &p.dim, &p.seqlen, &p.dstate, &p.groups};
  for (int i = 0; i < 5; ++i)
    if (!parse_size(f[i], prefixes[i], *sizes[i]))
      return bad("field " + std::to_string(i + 1) + " must be " + prefixes[i] + "<number>, got '" +
                 f[i] + "'");
  auto dt = parse_dtype(f[5]);
  if (!dt) return bad(dt.status().message());
  p.dtype = *dt;
  for (const FlagField& flag : kFlags) p.*flag.member = false;
  for (size_t i = 6; i < f.size(); ++i) {
    bool known = false;
    for (const FlagField& flag : kFlags)
      if (f[i] == flag.name) {
        if (p.*flag.member) return bad("flag '" + f[i] + "' repeated");
        p.*flag.member = known = true;
      }
    if (!known)
      return bad("unknown flag '" + f[i] + "' (expected vB, vC, D, z, bias, sp, last, h0)");
  }
  if (p.key() != prefix + body) return bad("not in canonical form (expected '" + p.key() + "')");
  if (Status s = p.validate(); !s) return bad(s.message());
  return p;
}

std::string FwdProblem::family_key() const {
  return std::string(to_string(dtype)) + flags_suffix(*this);
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
  const Expect expects[] = {
      {"u", &t.u, true, nullptr, dt, true, bdl, false},
      {"delta", &t.delta, true, nullptr, dt, true, bdl, false},
      {"A", &t.A, true, nullptr, f32, false, constant, false},
      {"B", &t.B, true, nullptr, p.variable_b ? dt : f32, p.variable_b,
       p.variable_b ? variable : constant, false},
      {"C", &t.C, true, nullptr, p.variable_c ? dt : f32, p.variable_c,
       p.variable_c ? variable : constant, false},
      {"D", &t.D, p.has_d, "has_d", f32, false, vec, false},
      {"z", &t.z, p.has_z, "has_z", dt, true, bdl, false},
      {"delta_bias", &t.delta_bias, p.has_delta_bias, "has_delta_bias", f32, false, vec, false},
      {"h0", &t.h0, p.has_initial_state, "has_initial_state", f32, false, state, false},
      {"out", &t.out, true, nullptr, dt, true, bdl, true},
      {"out_z", &t.out_z, p.has_z, "has_z", dt, true, bdl, true},
      {"last_state", &t.last_state, p.return_last_state, "return_last_state", f32, false, state,
       true},
  };
  for (const Expect& e : expects) SSMTUNE_RETURN_IF_ERROR(check_tensor(e, p));
  // Outputs may not overlap inputs or each other: the kernels read inputs
  // after writing outputs of earlier chunks.
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

}  // namespace ssmtune
