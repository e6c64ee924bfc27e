// Replays fuzz inputs without libFuzzer: calls LLVMFuzzerTestOneInput (trace_*_fuzz.cc) once
// per file, so that the seed corpus and every crash input ever found stay regression tests of the
// regular build (ctest -R fuzz_replay) — and of sanitizer builds, where they are most telling.
//
//   trainprof_fuzz_replay_<entry> PATH...   a file is one input; a directory gives each regular
//                                           file in it (recursively, sorted; hidden files and
//                                           README.md skipped)
//
// Exit status 0 when every input ran (a crash ends the process with the crash); 2 when a PATH
// cannot be read or no input was found at all.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool Skipped(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name == "README.md";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> found;
      for (fs::recursive_directory_iterator it(arg, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && !Skipped(it->path())) found.push_back(it->path());
      }
      if (ec) {
        std::fprintf(stderr, "fuzz replay: %s: %s\n", argv[i], ec.message().c_str());
        return 2;
      }
      std::sort(found.begin(), found.end());
      inputs.insert(inputs.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "fuzz replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "fuzz replay: no inputs found\n");
    return 2;
  }
  for (const fs::path& p : inputs) {
    std::ifstream f(p, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) {
      std::fprintf(stderr, "fuzz replay: cannot read %s\n", p.c_str());
      return 2;
    }
    // Named before it runs: if it crashes, the last line says which input did it.
    std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", p.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "fuzz replay: %zu inputs, no crash\n", inputs.size());
  return 0;
}
