// --gpus parsing.
#include "cli/gpu_list.h"

#include <algorithm>

namespace ssmtune::cli {

Result<std::vector<int>> parse_gpu_list(const std::string& text, int device_count) {
  if (device_count <= 0) return Status::no_driver("--gpus " + text + ": this machine has no GPU");
  const std::string range = device_count == 1
                                ? "this machine has one GPU, ordinal 0"
                                : "this machine has " + std::to_string(device_count) +
                                      " GPUs, ordinals 0 to " + std::to_string(device_count - 1);
  std::vector<int> out;
  if (text == "all") {
    for (int i = 0; i < device_count; ++i) out.push_back(i);
    return out;
  }
  const std::string expect =
      "--gpus takes 'all' or a comma-separated list of GPU ordinals (e.g. "
      "0,2), got '" +
      text + "'";
  size_t start = 0;
  for (;;) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    if (item.empty() || item.size() > 6 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return Status::invalid_argument(expect);
    const int gpu = std::stoi(item);
    if (gpu >= device_count)
      return Status::invalid_argument("--gpus " + text + ": there is no GPU " + item + " (" +
                                      range + ")");
    if (std::find(out.begin(), out.end(), gpu) != out.end())
      return Status::invalid_argument("--gpus " + text + ": GPU " + item + " is listed twice");
    out.push_back(gpu);
    if (comma == text.size()) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace ssmtune::cli
