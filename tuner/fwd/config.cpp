// FwdConfig names and keys (the algorithms' names come from their descriptors).
#include "tuner/fwd/config.h"

#include <iterator>
#include <sstream>
#include <vector>

#include "tuner/fwd/algorithms.h"
#include "tuner/key_fields.h"

namespace ssmtune {
namespace {

// "K64" with prefix "K" -> 64.
bool parse_field(const std::string& f, const std::string& prefix, int& out) {
  if (f.compare(0, prefix.size(), prefix) != 0 || f.size() == prefix.size()) return false;
  try {
    size_t used = 0;
    out = std::stoi(f.substr(prefix.size()), &used);
    return used == f.size() - prefix.size();
  } catch (...) {
    return false;
  }
}

}  // namespace

const char* to_string(ScanAlgo a) {
  const FwdAlgorithm* algo = find_fwd_algorithm(a);
  return algo != nullptr ? algo->name() : "?";
}

Result<ScanAlgo> parse_scan_algo(const std::string& s) {
  if (const FwdAlgorithm* algo = find_fwd_algorithm(s)) return algo->id();
  std::string names;
  const size_t n = std::size(kAllScanAlgos);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) names += i + 1 == n ? " or " : ", ";
    names += to_string(kAllScanAlgos[i]);
  }
  return Status::invalid_argument("unknown scan algorithm '" + s + "' (expected " + names + ")");
}

const char* to_string(AccType a) { return a == AccType::kF32 ? "fp32" : "fp64"; }

Result<AccType> parse_acc_type(const std::string& s) {
  if (s == "fp32" || s == "float") return AccType::kF32;
  if (s == "fp64" || s == "double") return AccType::kF64;
  return Status::invalid_argument("unknown accumulation dtype '" + s + "' (expected fp32 or fp64)");
}

const char* to_string(ExpMode e) {
  switch (e) {
    case ExpMode::kAccurate:
      return "accurate";
    case ExpMode::kFast:
      return "fast";
    case ExpMode::kPoly:
      return "poly";
  }
  return "?";
}

Result<ExpMode> parse_exp_mode(const std::string& s) {
  if (s == "accurate") return ExpMode::kAccurate;
  if (s == "fast") return ExpMode::kFast;
  if (s == "poly") return ExpMode::kPoly;
  return Status::invalid_argument("unknown exp mode '" + s + "' (expected accurate, fast or poly)");
}

std::string FwdConfig::key() const {
  std::ostringstream os;
  os << to_string(algo) << ".K" << chunk << ".D" << d_step << "." << to_string(acc) << ".t"
     << threads << ".i" << items << ".s" << n_split << "." << to_string(exp_mode);
  if (exp_mode == ExpMode::kPoly) os << poly_share;
  if (algo == ScanAlgo::kSplit) os << ".S" << segments;
  return os.str();
}

Result<FwdConfig> FwdConfig::from_key(const std::string& key) {
  const auto f = split_key(key, '.');
  auto bad = [&key](const std::string& why) {
    return Status::invalid_argument("bad kernel config key '" + key + "': " + why);
  };
  if (f.size() != 8 && f.size() != 9)
    return bad("expected 8 dot-separated fields (9 for split: S<segments>)");
  FwdConfig c;
  auto algo = parse_scan_algo(f[0]);
  if (!algo) return bad(algo.status().message());
  c.algo = *algo;
  if (!parse_field(f[1], "K", c.chunk)) return bad("field 2 must be K<chunk>");
  if (!parse_field(f[2], "D", c.d_step)) return bad("field 3 must be D<d_step>");
  auto acc = parse_acc_type(f[3]);
  if (!acc) return bad(acc.status().message());
  c.acc = *acc;
  if (!parse_field(f[4], "t", c.threads)) return bad("field 5 must be t<threads>");
  if (!parse_field(f[5], "i", c.items)) return bad("field 6 must be i<items>");
  if (!parse_field(f[6], "s", c.n_split)) return bad("field 7 must be s<n_split>");
  std::string mode = f[7];
  if (mode.rfind("poly", 0) == 0) {
    if (!parse_field(mode, "poly", c.poly_share)) return bad("poly needs a share, e.g. poly2");
    mode = "poly";
  }
  auto em = parse_exp_mode(mode);
  if (!em) return bad(em.status().message());
  c.exp_mode = *em;
  if (f.size() == 9 && !parse_field(f[8], "S", c.segments))
    return bad("field 9 must be S<segments>");
  if (c.key() != key) return bad("not in canonical form (expected '" + c.key() + "')");
  return c;
}

bool operator==(const FwdConfig& a, const FwdConfig& b) { return a.key() == b.key(); }

}  // namespace ssmtune
