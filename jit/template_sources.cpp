// Embedded and on-disk template sets.
#include "jit/template_sources.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/hash.h"

// Generated at build time by cmake/embed_templates.cmake.
namespace ssmtune::jit::generated {
struct EmbeddedFile {
  const char* path;
  const char* text;
};
extern const EmbeddedFile kTemplateFiles[];
extern const int kTemplateFileCount;
}  // namespace ssmtune::jit::generated

namespace ssmtune::jit {

TemplateSources::TemplateSources(std::map<std::string, std::string> files, std::string origin)
    : files_(std::move(files)), origin_(std::move(origin)) {
  Hasher h;
  for (const auto& [path, text] : files_) h.add(path).add(text);
  hash_ = h.hex();
}

const TemplateSources& TemplateSources::embedded() {
  static const TemplateSources kEmbedded = [] {
    std::map<std::string, std::string> files;
    for (int i = 0; i < generated::kTemplateFileCount; ++i)
      files[generated::kTemplateFiles[i].path] = generated::kTemplateFiles[i].text;
    return TemplateSources(std::move(files), "embedded");
  }();
  return kEmbedded;
}

Result<TemplateSources> TemplateSources::from_directory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Status::not_found("template directory '" + dir + "' does not exist");
  std::map<std::string, std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".cuh") continue;
    std::ifstream in(it->path(), std::ios::binary);
    if (!in) return Status::io_error("cannot read template '" + it->path().string() + "'");
    std::ostringstream text;
    text << in.rdbuf();
    files[fs::relative(it->path(), dir).generic_string()] = text.str();
  }
  if (ec) return Status::io_error("cannot list template directory '" + dir + "': " + ec.message());
  if (files.empty()) return Status::not_found("template directory '" + dir + "' holds no *.cuh");
  return TemplateSources(std::move(files), dir);
}

Result<TemplateSources> TemplateSources::load_default() {
  const char* dir = std::getenv("SSMTUNE_TEMPLATE_DIR");
  if (dir != nullptr && *dir != '\0') {
    auto r = from_directory(dir);
    if (!r) return r.status().with_context("SSMTUNE_TEMPLATE_DIR");
    return r;
  }
  return embedded();
}

const std::string* TemplateSources::find(const std::string& path) const {
  auto it = files_.find(path);
  return it == files_.end() ? nullptr : &it->second;
}

}  // namespace ssmtune::jit
