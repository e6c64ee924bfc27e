#include "input_files.h"

#include <sys/sysmacros.h>

namespace trainprof::launcher {

InputFiles::InputFiles(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    struct stat st {};
    if (stat(p.c_str(), &st) == 0) inputs_.emplace(std::make_pair(st.st_dev, st.st_ino), p);
  }
}

const std::string* InputFiles::Find(const struct stat& st) const {
  auto it = inputs_.find({st.st_dev, st.st_ino});
  return it == inputs_.end() ? nullptr : &it->second;
}

std::string InputFiles::Refusal(const struct stat& st, const std::string& what) const {
  const std::string* input = Find(st);
  if (input == nullptr) return "";
  return what + " is the input file " + *input + " (device " + std::to_string(major(st.st_dev)) + ":" +
         std::to_string(minor(st.st_dev)) + ", inode " + std::to_string(st.st_ino) +
         "): writing it would destroy what is being read; nothing was written, write elsewhere";
}

std::string InputFiles::CheckPath(const std::string& output, const std::string& what) const {
  struct stat st {};
  return stat(output.c_str(), &st) == 0 ? Refusal(st, what) : "";
}

std::string InputFiles::CheckFd(int fd, const std::string& what) const {
  struct stat st {};
  return fstat(fd, &st) == 0 ? Refusal(st, what) : "";
}

std::string InputFiles::Check(const OutputFile& file, const std::string& what) const {
  return file.existing() != nullptr ? Refusal(*file.existing(), what) : "";
}

}  // namespace trainprof::launcher
