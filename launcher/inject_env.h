// The environment `trainprof run` gives the command: the contract with the injection library
// (inject/config.h reads it; docs/cli.md, "Environment", documents it for users).
//
//   LD_PRELOAD                 [<sanitizer runtime>:]<lib>[:<previous LD_PRELOAD>]
//                              (the runtime only in sanitizer builds, see InjectFiles)
//   NVTX_INJECTION64_PATH      <lib>                      only if nvtx is traced
//   CUDA_INJECTION64_PATH      <lib>                      only if cuda is traced (the driver calls
//                                                         the library's InitializeInjection in cuInit)
//   TRAINPROF_LIB              <lib>
//   TRAINPROF_OUTPUT_DIR       absolute output directory   (set in the child when -o has %p)
//   TRAINPROF_FOLLOW_CHILDREN  1 or 0
//   TRAINPROF_TRACE            normalised source list, e.g. cuda,nvtx,python
//   TRAINPROF_ROOT_PID         the command's own pid       (always set in the child, after fork)
//   TRAINPROF_UMASK            octal --umask, e.g. 077: the library creates pid-*.trace with
//                              mode 0666 & ~MASK (and a missing directory with 0777 & ~MASK)
//   TRAINPROF_RUN_ID           32 hex digits, random per run (InjectConfig::run_id): written in
//                              every trace header, so a directory used by two runs can be told apart
//   PYTHONPATH                 <shim>[:<previous PYTHONPATH>]  if python is traced and the shim exists
//   TRAINPROF_PYTHON_DIR       <shim>                      idem (the library restores PYTHONPATH from it)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainprof::launcher {

/// Trace sources, a bit mask; TraceListString lists them in this order.
enum TraceSource : unsigned {
  kTraceCuda = 1u << 0,
  kTraceNvtx = 1u << 1,
  kTracePython = 1u << 2,
  kTraceTorchOps = 1u << 3,  ///< opt-in: PyTorch operators (inject/itt_collector.cc)
};
/// The default sources (every one but the opt-in torch-ops).
inline constexpr unsigned kTraceAll = kTraceCuda | kTraceNvtx | kTracePython;

/// Parses a --trace list: comma separated names from cuda, nvtx, python, torch-ops; "-name"
/// removes one. Entries apply left to right, starting from the defaults (kTraceAll) when the
/// first entry is a removal ("-python" = all but Python) or no entry adds a default source (only
/// opt-in ones: "torch-ops" = the defaults and torch-ops), and from none otherwise ("nvtx" = only
/// NVTX, "nvtx,python,torch-ops"). An empty string means the defaults. Errors: unknown name (the
/// message lists the valid ones), or nothing left to trace.
std::optional<unsigned> ParseTraceList(std::string_view list, std::string* error);

/// "cuda,nvtx,python,torch-ops" order, comma separated, for TRAINPROF_TRACE.
std::string TraceListString(unsigned mask);

/// Where the injection library and the Python shim are.
struct InjectFiles {
  std::string library;      ///< absolute path of libtrainprof_inject.so
  std::string python_shim;  ///< absolute folder, or empty if there is none
  /// Sanitizer builds only (TRAINPROF_SANITIZE, docs/testing.md), else empty: the sanitizer's
  /// shared runtime, which the loader must map before the sanitized library in programs that are
  /// not sanitized themselves (python3, sh); it goes first in LD_PRELOAD.
  std::string sanitizer_runtime;
};

/// Where an installed trainprof keeps the library's and the Python shim's folders, relative to
/// the folder of its executable: GNUInstallDirs' layout at configure time (launcher/CMakeLists.txt),
/// e.g. "../lib/trainprof" and "../share/trainprof/python". Relative, so that a moved prefix still
/// works; absolute only where the build was configured with an absolute CMAKE_INSTALL_LIBDIR or
/// CMAKE_INSTALL_DATADIR.
extern const char* const kInstalledLibraryDir;
extern const char* const kInstalledShimDir;

/// Finds the library: `override_lib` (TRAINPROF_INJECT_LIB) if non-null, else relative to the
/// real path of the trainprof executable `exe` (in folder <dir>):
///   <dir>/../inject/libtrainprof_inject.so                     (build tree)
///   <dir>/<kInstalledLibraryDir>/libtrainprof_inject.so        (installed)
/// and the shim folder <dir>/../python or <dir>/<kInstalledShimDir>; in a sanitizer build,
/// the sanitizer runtime this trainprof was built with. Returns nullopt with a message in *error
/// if the library is missing, is not a shared library the loader can preload (elf_library.h: the
/// message names TRAINPROF_INJECT_LIB or "found next to trainprof", the file and what is wrong), or
/// its path cannot be put in LD_PRELOAD.
std::optional<InjectFiles> FindInjectFiles(const char* override_lib, const std::string& exe,
                                           std::string* error);

/// The real path of the running executable (/proc/self/exe), or empty.
std::string SelfExecutable();

struct InjectConfig {
  InjectFiles files;
  std::string output_dir;  ///< absolute
  bool follow_children = false;
  unsigned trace = kTraceAll;
  unsigned umask = 077;  ///< --umask, for TRAINPROF_UMASK
  std::string run_id;  ///< NewRunId(); empty: TRAINPROF_RUN_ID is removed
};

/// Parses --umask: 1 to 4 octal digits, at most 0777 (e.g. "077", "0027", "22"). nullopt with a
/// message in *error otherwise.
std::optional<unsigned> ParseUmask(std::string_view text, std::string* error);

/// `mask` as TRAINPROF_UMASK writes it: three octal digits ("077").
std::string FormatUmask(unsigned mask);

/// A fresh run id: 32 lowercase hex digits from getrandom(2) (the time and pid if that fails).
std::string NewRunId();

/// The command's environment: `base` ("NAME=value" entries, e.g. environ) with the variables
/// above set. TRAINPROF_ROOT_PID is left for the child to set (SetEnv after fork).
std::vector<std::string> BuildChildEnvironment(const std::vector<std::string>& base,
                                               const InjectConfig& config);

/// Sets NAME=value in `env`, replacing an existing entry of that name.
void SetEnv(std::vector<std::string>* env, std::string_view name, std::string_view value);

/// Removes NAME from `env`.
void UnsetEnv(std::vector<std::string>* env, std::string_view name);

/// The value of NAME in `env`, or nullopt.
std::optional<std::string> GetEnv(const std::vector<std::string>& env, std::string_view name);

/// `entry` followed by the entries of `list` (separated by any of `separators`) except empty
/// ones and copies of `entry`, joined with ':'. Empty entries are dropped because in PYTHONPATH
/// an empty entry means the current directory.
std::string PrependToList(std::string_view list, std::string_view entry,
                          std::string_view separators = ":");

/// The current process environment as "NAME=value" strings.
std::vector<std::string> CurrentEnvironment();

}  // namespace trainprof::launcher
