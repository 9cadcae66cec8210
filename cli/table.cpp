// Table rendering.
#include "cli/table.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace ssmtune::cli {
namespace {

// Control characters (a terminal escape, a newline in a device name from an
// older database) are shown as \xNN, never sent to the terminal raw.
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string cell(const nlohmann::json& v) {
  if (v.is_string()) return printable(v.get<std::string>());
  if (v.is_null()) return "";
  if (v.is_number_float()) {
    std::ostringstream os;
    os << std::setprecision(4) << v.get<double>();
    return os.str();
  }
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Result<Format> parse_format(const std::string& s) {
  if (s == "table") return Format::kTable;
  if (s == "json") return Format::kJson;
  if (s == "csv") return Format::kCsv;
  return Status::invalid_argument("unknown format '" + s + "' (expected table, json or csv)");
}

void Table::add_row(std::vector<nlohmann::json> values) {
  values.resize(columns_.size());
  rows_.push_back(std::move(values));
}

void Table::print(std::ostream& os, Format format) const {
  if (format == Format::kJson) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : rows_) {
      nlohmann::json o = nlohmann::json::object();
      for (size_t i = 0; i < columns_.size(); ++i) o[columns_[i]] = r[i];
      arr.push_back(std::move(o));
    }
    // Invalid UTF-8 (from an older database) is replaced, not thrown on.
    os << arr.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  if (format == Format::kCsv) {
    for (size_t i = 0; i < columns_.size(); ++i) os << (i ? "," : "") << csv_escape(columns_[i]);
    os << "\n";
    for (const auto& r : rows_) {
      for (size_t i = 0; i < r.size(); ++i) os << (i ? "," : "") << csv_escape(cell(r[i]));
      os << "\n";
    }
    return;
  }
  std::vector<size_t> width(columns_.size());
  for (size_t i = 0; i < columns_.size(); ++i) width[i] = columns_[i].size();
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], cell(r[i]).size());
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      os << (i ? "  " : "") << cells[i];
      if (i + 1 < cells.size()) os << std::string(width[i] - cells[i].size(), ' ');
    }
    os << "\n";
  };
  line(columns_);
  std::vector<std::string> rule;
  rule.reserve(width.size());
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& r : rows_) {
    std::vector<std::string> cells;
    cells.reserve(r.size());
    for (const auto& v : r) cells.push_back(cell(v));
    line(cells);
  }
}

}  // namespace ssmtune::cli
