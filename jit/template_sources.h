// The CUDA C++ kernel templates NVRTC compiles, as (path, text) pairs.
// They are embedded into the binary at build time so nothing depends on the
// source tree at run time; SSMTUNE_TEMPLATE_DIR (or from_directory) replaces
// them with a directory's *.cuh files for development.
// Immutable after construction; thread-safe.
#pragma once

#include <map>
#include <string>

#include "ssmtune/status.h"

namespace ssmtune::jit {

class TemplateSources {
 public:
  // The templates compiled into this binary.
  static const TemplateSources& embedded();
  // Every *.cuh under `dir`, keyed by its path relative to `dir`.
  static Result<TemplateSources> from_directory(const std::string& dir);
  // from_directory($SSMTUNE_TEMPLATE_DIR) when set, else embedded().
  static Result<TemplateSources> load_default();

  const std::map<std::string, std::string>& files() const { return files_; }
  const std::string* find(const std::string& path) const;
  // Hash over every path and text: part of each cubin's cache key and the
  // template version recorded beside each measurement.
  const std::string& hash() const { return hash_; }
  // "embedded" or the directory read.
  const std::string& origin() const { return origin_; }

 private:
  TemplateSources(std::map<std::string, std::string> files, std::string origin);

  std::map<std::string, std::string> files_;
  std::string origin_;
  std::string hash_;
};

}  // namespace ssmtune::jit
