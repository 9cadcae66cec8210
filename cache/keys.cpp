// Key prefixes, checks and parameters.
#include "cache/keys.h"

#include <nlohmann/json.hpp>

#include "tuner/fwd/config.h"
#include "tuner/fwd/problem.h"

namespace ssmtune::cache {
namespace {

bool family_name_ok(const std::string& f) {
  if (f.empty() || f.size() > 32) return false;
  for (char c : f)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Dot-separated non-empty tokens of printable ASCII without spaces.
bool body_ok(const std::string& b) {
  if (b.empty() || b.size() > 512 || b.front() == '.' || b.back() == '.') return false;
  for (size_t i = 0; i < b.size(); ++i) {
    const char c = b[i];
    if (c <= ' ' || c > '~') return false;
    if (c == '.' && b[i + 1] == '.') return false;
  }
  return true;
}

}  // namespace

std::string qualified_key(const std::string& problem_key) {
  return problem_key.find(':') == std::string::npos ? std::string(kLegacyFamily) + ":" + problem_key
                                                    : problem_key;
}

std::string key_body(const std::string& problem_key) {
  const auto colon = problem_key.find(':');
  return colon == std::string::npos ? problem_key : problem_key.substr(colon + 1);
}

Status check_problem_key(const std::string& problem_key) {
  const auto colon = problem_key.find(':');
  if (colon == std::string::npos)
    return Status::invalid_argument("bad problem key '" + problem_key +
                                    "': no family prefix (e.g. 'fwd:')");
  const std::string family = problem_key.substr(0, colon), body = problem_key.substr(colon + 1);
  if (!family_name_ok(family))
    return Status::invalid_argument("bad problem key '" + problem_key + "': bad family name '" +
                                    family + "'");
  if (family == kLegacyFamily) return FwdProblem::from_key(body).status();
  if (!body_ok(body))
    return Status::invalid_argument("bad problem key '" + problem_key +
                                    "': expected dot-separated tokens after the family");
  return Status::ok();
}

Status check_config_key(const std::string& family, const std::string& config_key) {
  if (family == kLegacyFamily) return FwdConfig::from_key(config_key).status();
  if (!family_name_ok(family))
    return Status::invalid_argument("bad family name '" + family + "' for config '" + config_key +
                                    "'");
  if (!body_ok(config_key))
    return Status::invalid_argument("bad kernel config key '" + config_key +
                                    "': expected dot-separated tokens");
  return Status::ok();
}

std::string key_params(const std::string& body) {
  nlohmann::json tokens = nlohmann::json::array();
  size_t start = 0;
  for (;;) {
    const auto dot = body.find('.', start);
    tokens.push_back(
        body.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return tokens.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ssmtune::cache
