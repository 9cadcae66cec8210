// Rows of named columns printed as an aligned table, JSON (array of
// objects) or CSV: the one output path every ssmtune subcommand shares.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ssmtune/status.h"

namespace ssmtune::cli {

enum class Format { kTable, kJson, kCsv };
Result<Format> parse_format(const std::string& s);

class Table {
 public:
  explicit Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  // One value per column; numbers keep their type in JSON.
  void add_row(std::vector<nlohmann::json> values);
  size_t rows() const { return rows_.size(); }
  void print(std::ostream& os, Format format) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<nlohmann::json>> rows_;
};

}  // namespace ssmtune::cli
