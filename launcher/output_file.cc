#include "output_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace trainprof::launcher {

OutputFilePlan PlanOutputFile(const std::string& path) {
  // Follow links (a dangling one leads to the file it would create), at most 40 as the kernel.
  std::filesystem::path target = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat lst {};
    if (::lstat(target.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) break;
    std::error_code ec;
    std::filesystem::path next = std::filesystem::read_symlink(target, ec);
    if (ec) break;
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return {target.string(), ""};
  return {target.string() + ".tmp." + std::to_string(::getpid()), target.string()};
}

}  // namespace trainprof::launcher
