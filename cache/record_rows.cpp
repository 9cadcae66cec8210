// Generic sqlite columns, binds and reads over the record field visitors.
#include "cache/record_rows.h"

namespace ssmtune::cache {
namespace {

// Visitors without a record: the field names and types only.
struct Names {
  std::string prefix;
  std::string out;
  int count = 0;
  template <typename T>
  void operator()(const char* name, const T&) {
    out += (out.empty() ? "" : ", ") + prefix + name;
    ++count;
  }
};

struct Defs {
  std::string out;
  void add(const char* name, const std::string& type) {
    out += (out.empty() ? "" : ",\n  ") + std::string(name) + " " + type;
  }
  void operator()(const char* name, const std::string&) { add(name, "TEXT NOT NULL"); }
  void operator()(const char* name, const double&) { add(name, "REAL"); }
  void operator()(const char* name, const int64_t&) { add(name, "INTEGER NOT NULL"); }
  void operator()(const char* name, const MeasureStatus&) {
    std::string names;
    for (MeasureStatus s : kAllMeasureStatuses)
      names += (names.empty() ? "'" : ", '") + std::string(to_string(s)) + "'";
    add(name, "TEXT NOT NULL CHECK (" + std::string(name) + " IN (" + names + "))");
  }
};

struct Binder {
  Statement& st;
  int index;
  Status status;
  template <typename T>
  void operator()(const char*, const T& v) {
    if (!status.is_ok()) return;
    if constexpr (std::is_same_v<T, MeasureStatus>) {
      status = st.bind(index++, to_string(v));
    } else {
      status = st.bind(index++, v);
    }
  }
};

struct RowReader {
  const Statement& st;
  int index;
  Status status;
  void operator()(const char*, std::string& v) { v = st.column_text(index++); }
  void operator()(const char*, double& v) { v = st.column_double(index++); }
  void operator()(const char*, int64_t& v) { v = st.column_int(index++); }
  void operator()(const char* name, MeasureStatus& v) {
    auto s = parse_measure_status(st.column_text(index++));
    if (s) {
      v = *s;
    } else if (status.is_ok()) {
      status = Status::corrupt(std::string("measurement row, column ") + name + ": " +
                               s.status().message());
    }
  }
};

const Measurement kMeasurement{};
const OutputError kError{};

}  // namespace

std::string measurement_columns(const std::string& prefix) {
  Names n{prefix, "", 0};
  visit_fields(kMeasurement, n);
  return n.out;
}

int measurement_column_count() {
  Names n;
  visit_fields(kMeasurement, n);
  return n.count;
}

std::string error_columns(const std::string& prefix) {
  Names n{prefix, "", 0};
  visit_fields_of_error(kError, n);
  return n.out;
}

int error_column_count() {
  Names n;
  visit_fields_of_error(kError, n);
  return n.count;
}

std::string measurement_column_defs() {
  Defs d;
  visit_fields(kMeasurement, d);
  return d.out;
}

std::string error_column_defs() {
  Defs d;
  visit_fields_of_error(kError, d);
  return d.out;
}

std::string placeholders(int first, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += (i ? ", ?" : "?") + std::to_string(first + i);
  return out;
}

Status bind_measurement(Statement& st, int first, const Measurement& m) {
  Binder b{st, first, Status::ok()};
  visit_fields(m, b);
  return b.status;
}

Status bind_error(Statement& st, int first, const OutputError& e) {
  Binder b{st, first, Status::ok()};
  visit_fields_of_error(e, b);
  return b.status;
}

Result<Measurement> read_measurement(const Statement& st, int first) {
  Measurement m;
  RowReader r{st, first, Status::ok()};
  visit_fields(m, r);
  if (!r.status.is_ok()) return r.status;
  return m;
}

OutputError read_error(const Statement& st, int first) {
  OutputError e;
  RowReader r{st, first, Status::ok()};
  visit_fields_of_error(e, r);
  return e;
}

}  // namespace ssmtune::cache
