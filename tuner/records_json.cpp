// JSON <-> records through the field descriptions of tuner/records.h.
#include "tuner/records_json.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace ssmtune {
namespace {

using nlohmann::json;

struct Writer {
  json& out;
  void operator()(const char* name, const std::string& v) { out[name] = v; }
  void operator()(const char* name, double v) { out[name] = json_number(v); }
  void operator()(const char* name, int64_t v) { out[name] = v; }
  void operator()(const char* name, MeasureStatus v) { out[name] = to_string(v); }
};

// Reads each visited field present in `j`; keeps the first error.
struct Reader {
  const json& j;
  const std::string& where;
  Status status;

  const json* find(const char* name) {
    if (!status.is_ok()) return nullptr;
    auto it = j.find(name);
    return it == j.end() ? nullptr : &*it;
  }
  void fail(const char* name, const std::string& why) {
    if (status.is_ok()) status = Status::invalid_argument(where + "." + name + ": " + why);
  }
  void operator()(const char* name, std::string& v) {
    const json* x = find(name);
    if (x == nullptr) return;
    if (!x->is_string()) return fail(name, "expected a string");
    v = x->get<std::string>();
  }
  void operator()(const char* name, double& v) {
    const json* x = find(name);
    if (x == nullptr) return;
    auto d = number_from_json(*x, where + "." + name);
    if (!d) {
      if (status.is_ok()) status = d.status();
      return;
    }
    v = *d;
  }
  void operator()(const char* name, int64_t& v) {
    const json* x = find(name);
    if (x == nullptr) return;
    if (x->is_number_unsigned() && x->get<uint64_t>() > uint64_t(INT64_MAX))
      return fail(name, "integer out of range");
    if (!x->is_number_integer()) return fail(name, "expected an integer");
    v = x->get<int64_t>();
  }
  void operator()(const char* name, MeasureStatus& v) {
    const json* x = find(name);
    if (x == nullptr) return;
    if (!x->is_string()) return fail(name, "expected a string");
    auto s = parse_measure_status(x->get<std::string>());
    if (!s) return fail(name, s.status().message());
    v = *s;
  }
};

Status check_object(const json& j, const std::string& where,
                    std::initializer_list<const char*> required) {
  if (!j.is_object()) return Status::invalid_argument(where + ": expected an object");
  for (const char* name : required)
    if (!j.contains(name)) return Status::invalid_argument(where + "." + name + ": missing");
  return Status::ok();
}

}  // namespace

json json_number(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

Result<double> number_from_json(const json& j, const std::string& where) {
  if (j.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  return Status::invalid_argument(where + ": expected a number, null, \"inf\" or \"-inf\"");
}

json to_json(const OutputError& e) {
  json out = json::object();
  visit_fields_of_error(e, Writer{out});
  return out;
}

json to_json(const Measurement& m) {
  json out = json::object();
  visit_fields(m, Writer{out});
  json errors = json::array();
  for (const OutputError& e : m.errors) errors.push_back(to_json(e));
  out["errors"] = std::move(errors);
  return out;
}

Status output_error_from_json(const json& j, const std::string& where, OutputError& e) {
  SSMTUNE_RETURN_IF_ERROR(check_object(j, where, {"output"}));
  Reader r{j, where, Status::ok()};
  visit_fields_of_error(e, r);
  if (r.status.is_ok() && e.output.empty())
    return Status::invalid_argument(where + ".output: empty output name");
  return r.status;
}

Status measurement_from_json(const json& j, const std::string& where, Measurement& m,
                             std::initializer_list<const char*> required) {
  SSMTUNE_RETURN_IF_ERROR(check_object(j, where, required));
  Reader r{j, where, Status::ok()};
  visit_fields(m, r);
  SSMTUNE_RETURN_IF_ERROR(r.status);
  auto it = j.find("errors");
  if (it == j.end()) return Status::ok();
  if (!it->is_array()) return Status::invalid_argument(where + ".errors: expected an array");
  m.errors.clear();
  for (size_t i = 0; i < it->size(); ++i) {
    OutputError e;
    SSMTUNE_RETURN_IF_ERROR(
        output_error_from_json((*it)[i], where + ".errors[" + std::to_string(i) + "]", e));
    for (const OutputError& seen : m.errors)
      if (seen.output == e.output)
        return Status::invalid_argument(where + ".errors[" + std::to_string(i) + "]: output '" +
                                        e.output + "' repeated");
    m.errors.push_back(std::move(e));
  }
  return Status::ok();
}

}  // namespace ssmtune
