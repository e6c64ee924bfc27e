#include "inject_env.h"

#include "elf_library.h"

#include <sys/random.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include <filesystem>

extern char** environ;

namespace trainprof::launcher {

namespace {

struct SourceName {
  const char* name;
  TraceSource bit;
};
constexpr SourceName kSources[] = {
    {"cuda", kTraceCuda}, {"nvtx", kTraceNvtx}, {"python", kTracePython}, {"torch-ops", kTraceTorchOps}};
constexpr const char* kValidSources = "valid: cuda, nvtx, python, torch-ops";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsRegularFile(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

bool IsDirectory(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_directory(p, ec);
}

std::string Canonical(const std::filesystem::path& p) {
  std::error_code ec;
  auto c = std::filesystem::canonical(p, ec);
  return ec ? std::filesystem::absolute(p, ec).lexically_normal().string() : c.string();
}

}  // namespace

#ifndef TRAINPROF_INSTALLED_LIB_DIR
#define TRAINPROF_INSTALLED_LIB_DIR "../lib/trainprof"
#endif
#ifndef TRAINPROF_INSTALLED_SHIM_DIR
#define TRAINPROF_INSTALLED_SHIM_DIR "../share/trainprof/python"
#endif
const char* const kInstalledLibraryDir = TRAINPROF_INSTALLED_LIB_DIR;
const char* const kInstalledShimDir = TRAINPROF_INSTALLED_SHIM_DIR;

std::optional<unsigned> ParseTraceList(std::string_view list, std::string* error) {
  list = Trim(list);
  struct Item {
    const SourceName* source;
    bool remove;
  };
  std::vector<Item> items;
  bool adds_default = false;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = Trim(list.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) continue;  // "cuda,,nvtx" or a trailing comma
    bool remove = item.front() == '-';
    if (remove) item.remove_prefix(1);
    const SourceName* found = nullptr;
    for (const auto& s : kSources) {
      if (item == s.name) found = &s;
    }
    if (found == nullptr) {
      *error = "--trace: unknown source '" + std::string(item) + "' (" + kValidSources +
               "; prefix one with '-' to leave it out, e.g. --trace=-python)";
      return std::nullopt;
    }
    if (!remove && (found->bit & kTraceAll) != 0) adds_default = true;
    items.push_back({found, remove});
  }
  // As before torch-ops: from all when the first entry is a removal, else from none; a list
  // that adds only opt-in sources adds them to the defaults.
  const bool from_all = !adds_default || (!items.empty() && items.front().remove);
  unsigned mask = from_all ? kTraceAll : 0;
  for (const Item& i : items) mask = i.remove ? (mask & ~i.source->bit) : (mask | i.source->bit);
  if (mask == 0) {
    *error = "--trace '" + std::string(list) + "' leaves no source to trace (" + kValidSources + ")";
    return std::nullopt;
  }
  return mask;
}

std::optional<unsigned> ParseUmask(std::string_view text, std::string* error) {
  unsigned mask = 0;
  bool ok = !text.empty() && text.size() <= 4;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '7';
    mask = mask * 8 + static_cast<unsigned>(c - '0');
  }
  if (!ok || mask > 0777) {
    *error = "--umask: '" + std::string(text) + "' is not an octal mask from 000 to 777 (e.g. 077, 027, 022)";
    return std::nullopt;
  }
  if ((mask & 0700) != 0) {
    // The trace directory would be one its owner cannot enter or write (silently unprofiled).
    *error = "--umask: '" + std::string(text) + "' takes the owner's own permissions away (the trace "
             "directory needs rwx for you, the files rw): the first digit must be 0 (e.g. 077, 027, 022)";
    return std::nullopt;
  }
  return mask;
}

std::string FormatUmask(unsigned mask) {
  char buf[8];
  snprintf(buf, sizeof(buf), "%03o", mask & 0777);
  return buf;
}

std::string TraceListString(unsigned mask) {
  std::string out;
  for (const auto& s : kSources) {
    if (!(mask & s.bit)) continue;
    if (!out.empty()) out += ',';
    out += s.name;
  }
  return out;
}

std::string SelfExecutable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

std::optional<InjectFiles> FindInjectFiles(const char* override_lib, const std::string& exe,
                                           std::string* error) {
  InjectFiles files;
  std::filesystem::path dir = std::filesystem::path(exe).parent_path();
  if (override_lib != nullptr) {
    // Checked now: the loader would only say "cannot be preloaded ... ignored" and run the command
    // unprofiled.
    if (std::string problem = SharedLibraryProblem(override_lib); !problem.empty()) {
      *error = std::string("TRAINPROF_INJECT_LIB=") + override_lib + ": the file " + problem +
               " (it must name libtrainprof_inject.so, or be unset)";
      return std::nullopt;
    }
    files.library = Canonical(override_lib);
  } else {
    std::vector<std::filesystem::path> candidates;
    if (!exe.empty()) {
      candidates = {dir / ".." / "inject" / "libtrainprof_inject.so",
                    dir / kInstalledLibraryDir / "libtrainprof_inject.so"};
    }
    for (const auto& c : candidates) {
      if (IsRegularFile(c)) {
        files.library = Canonical(c);
        break;
      }
    }
    if (!files.library.empty()) {
      if (std::string problem = SharedLibraryProblem(files.library); !problem.empty()) {
        *error = "the injection library " + files.library + ", found next to trainprof, " + problem +
                 "; reinstall or rebuild trainprof, or set TRAINPROF_INJECT_LIB to a good copy";
        return std::nullopt;
      }
    } else {
      std::string looked;
      for (const auto& c : candidates) looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
      *error = "cannot find the injection library libtrainprof_inject.so (looked in: " +
               (looked.empty() ? std::string("nowhere, /proc/self/exe unreadable") : looked) +
               "); build it, or set TRAINPROF_INJECT_LIB to its path";
      return std::nullopt;
    }
  }
  // The dynamic loader splits LD_PRELOAD at ':' and spaces, with no way to quote them.
  if (files.library.find_first_of(": \t") != std::string::npos) {
    *error = "the injection library path '" + files.library +
             "' contains ':' or a space, which LD_PRELOAD cannot express; install or copy trainprof "
             "elsewhere, or set TRAINPROF_INJECT_LIB";
    return std::nullopt;
  }
#ifdef TRAINPROF_SANITIZER_RUNTIME
  files.sanitizer_runtime = TRAINPROF_SANITIZER_RUNTIME;
#endif
  if (!exe.empty()) {
    for (const auto& c : {dir / ".." / "python", dir / kInstalledShimDir}) {
      if (IsDirectory(c)) {
        files.python_shim = Canonical(c);
        break;
      }
    }
    if (files.python_shim.find(':') != std::string::npos) files.python_shim.clear();
  }
  return files;
}

void SetEnv(std::vector<std::string>* env, std::string_view name, std::string_view value) {
  std::string entry;
  entry.reserve(name.size() + 1 + value.size());
  entry.append(name).append("=").append(value);
  for (auto& e : *env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      e = std::move(entry);
      return;
    }
  }
  env->push_back(std::move(entry));
}

void UnsetEnv(std::vector<std::string>* env, std::string_view name) {
  std::erase_if(*env, [&](const std::string& e) {
    return e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=';
  });
}

std::optional<std::string> GetEnv(const std::vector<std::string>& env, std::string_view name) {
  for (const auto& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

std::string PrependToList(std::string_view list, std::string_view entry, std::string_view separators) {
  std::string out(entry);
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t sep = list.find_first_of(separators, pos);
    if (sep == std::string_view::npos) sep = list.size();
    std::string_view item = list.substr(pos, sep - pos);
    pos = sep + 1;
    if (item.empty() || item == entry) continue;
    out += ':';
    out += item;
  }
  return out;
}

std::vector<std::string> BuildChildEnvironment(const std::vector<std::string>& base,
                                               const InjectConfig& config) {
  std::vector<std::string> env = base;
  const std::string& lib = config.files.library;
  // The loader accepts spaces as well as colons between LD_PRELOAD entries.
  std::string preload = PrependToList(GetEnv(env, "LD_PRELOAD").value_or(""), lib, ": \t");
  // Sanitizer builds: the runtime first, or it refuses to start ("does not come first").
  if (!config.files.sanitizer_runtime.empty()) preload = PrependToList(preload, config.files.sanitizer_runtime);
  SetEnv(&env, "LD_PRELOAD", preload);
  if (config.trace & kTraceNvtx) {
    SetEnv(&env, "NVTX_INJECTION64_PATH", lib);
  } else if (GetEnv(env, "NVTX_INJECTION64_PATH") == lib) {
    UnsetEnv(&env, "NVTX_INJECTION64_PATH");  // inherited from an enclosing trainprof run
  }
  // The CUDA driver dlopens CUDA_INJECTION64_PATH in cuInit and calls its InitializeInjection:
  // that is when the library loads CUPTI (only processes that use CUDA ever do).
  if (config.trace & kTraceCuda) {
    SetEnv(&env, "CUDA_INJECTION64_PATH", lib);
  } else if (GetEnv(env, "CUDA_INJECTION64_PATH") == lib) {
    UnsetEnv(&env, "CUDA_INJECTION64_PATH");  // inherited from an enclosing trainprof run
  }
  // ittnotify (linked into PyTorch) dlopens INTEL_LIBITTNOTIFY64 at its first call and hands it
  // the ITT calls: the library's ITT collector records operators from them (itt_collector.cc).
  if (config.trace & kTraceTorchOps) {
    SetEnv(&env, "INTEL_LIBITTNOTIFY64", lib);
  } else if (GetEnv(env, "INTEL_LIBITTNOTIFY64") == lib) {
    UnsetEnv(&env, "INTEL_LIBITTNOTIFY64");  // inherited from an enclosing trainprof run
  }
  SetEnv(&env, "TRAINPROF_LIB", lib);
  SetEnv(&env, "TRAINPROF_OUTPUT_DIR", config.output_dir);
  SetEnv(&env, "TRAINPROF_FOLLOW_CHILDREN", config.follow_children ? "1" : "0");
  SetEnv(&env, "TRAINPROF_TRACE", TraceListString(config.trace));
  SetEnv(&env, "TRAINPROF_UMASK", FormatUmask(config.umask));
  if (!config.run_id.empty()) {
    SetEnv(&env, "TRAINPROF_RUN_ID", config.run_id);
  } else {
    UnsetEnv(&env, "TRAINPROF_RUN_ID");  // inherited from an enclosing trainprof run
  }
  if ((config.trace & kTracePython) && !config.files.python_shim.empty()) {
    const std::string& shim = config.files.python_shim;
    SetEnv(&env, "PYTHONPATH", PrependToList(GetEnv(env, "PYTHONPATH").value_or(""), shim));
    SetEnv(&env, "TRAINPROF_PYTHON_DIR", shim);
  } else {
    UnsetEnv(&env, "TRAINPROF_PYTHON_DIR");
  }
  return env;
}

std::string NewRunId() {
  uint8_t bytes[16] = {};
  ssize_t got = getrandom(bytes, sizeof(bytes), GRND_NONBLOCK);
  if (got != static_cast<ssize_t>(sizeof(bytes))) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t a = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
    uint64_t b = (static_cast<uint64_t>(getpid()) << 32) ^ reinterpret_cast<uintptr_t>(&got);
    memcpy(bytes, &a, 8);
    memcpy(bytes + 8, &b, 8);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

}  // namespace trainprof::launcher
