// Native addresses of a stack → function, file and line, with elfutils' libdw (offline: the
// collector opens the files the MODULE records name; docs/trace-format.md, "Stacks"), names
// demangled with abi::__cxa_demangle; and a stack made ready to show: trainprof's own frames
// dropped, the call site found.
//
//   address a in MODULE {bias, start, end, path, build_id}
//     ──► ELF address a − bias − 1 (a return address: the call instruction is before it)
//     ──► dwfl_module_addrname (symbol) + dwfl_module_getsrc/dwfl_lineinfo (file:line, with -g)
//   the file missing, unreadable, not ELF, or its build id not the recorded one, or no symbol
//     ──► "libfoo.so+0x1a2b" (module basename + offset in the file); no module: "0x7f..."
//   no build id recorded: the file is trusted only if its PT_LOAD span is the module's recorded
//     span (start − bias .. end − bias) and it was not modified after the process started
//
// Files are opened once per Symbolizer (one per report); addresses are cached.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collector/base/string_pool.h"
#include "collector/model/stacks.h"

namespace trainprof::collector {

/// One frame, symbolized. JSON: {"function", "file" (or null), "line" (or null), "module" (or null)}.
/// The function name of the frame that stands for a stack's outer frames the library did not keep
/// (StackFrame::cut): the stack was deeper than 64 native or 64 Python frames.
inline constexpr const char* kOuterFramesCut = "<outer frames not recorded>";

struct SymbolFrame {
  std::string function;             ///< demangled; "libfoo.so+0x1a2b" when unknown
  std::optional<std::string> file;  ///< source file (Python: the code's file)
  std::optional<uint32_t> line;
  std::optional<std::string> module;  ///< basename of the module's path; null for Python frames
  bool python = false;
  /// Text for folded stacks and the timeline: "function (file:line)", or "function".
  std::string Label() const;
  auto Key() const { return std::tie(function, file, line, module, python); }
};

/// Whether a frame (of ShownStack::frames) is the user's code: a Python frame outside trainprof's
/// shim, torch, the nvtx package, Lightning and the standard library; a native frame with a source
/// line (debug information) outside the NVTX/CUDA entry points. The cut mark is none.
bool IsUserFrame(const SymbolFrame& f);

/// A stack ready to show: frames innermost first without trainprof's own, and the call site.
struct ShownStack {
  std::vector<SymbolFrame> frames;
  size_t call_site = 0;  ///< index in frames of the first user frame (frames.size(): none)
  bool known = false;    ///< false: no STACK defines the id (damage); frames empty
};

class Symbolizer {
 public:
  explicit Symbolizer(const StringPool& strings);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// One native address of an image (`stacks` gives its modules).
  SymbolFrame Native(const ImageStacks& stacks, uint64_t address);
  /// The stack `id` of an image, symbolized, trainprof's frames dropped, its call site found:
  /// the innermost Python frame of the user's code where the stack has Python frames (outside
  /// trainprof's shim, torch, the nvtx package, Lightning and the standard library; when all are
  /// library frames, the innermost outside the shim), else the innermost native frame outside the NVTX/CUDA entry points and
  /// libraries (nvtx*, libcudart, libcuda, libnvToolsExt) — the user's line.
  ShownStack Show(const ImageStacks& stacks, uint64_t id);

  /// One warning per module file the frames shown so far could not be symbolized with, by path:
  /// "stacks: /opt/x/libfoo.so is not on this machine or not readable: its frames show as
  /// libfoo.so+0xOFFSET", "... was rebuilt since the run (build id ... in the trace, ... in the
  /// file): ...", "... is not the file of the run (no build id in the trace; its load span ...)";
  /// pseudo-objects without a path (linux-vdso.so.1) are not files and never named. One per path.
  std::vector<std::string> Problems() const;

  /// One problem of Problems(), with the key of the file it is about (path and identity), which
  /// orders them, and its path, by which they are said once.
  struct Problem {
    std::string key;
    std::string path;
    std::string line;
    bool operator==(const Problem&) const = default;
  };
  /// Every file's problem, by key (several keys may share a path).
  std::vector<Problem> KeyedProblems() const;
  /// The lines of problems gathered from several symbolizers (or summaries, each its own): as
  /// Problems() words them, by key, one per path.
  static std::vector<std::string> ProblemLines(std::vector<Problem> problems);

 private:
  struct ElfFile;
  ElfFile* Open(const Module& m, uint64_t start_realtime_ns);
  const StringPool& strings_;
  // path + build id (none recorded: + the recorded span and the process's start) → opened file
  std::map<std::string, std::unique_ptr<ElfFile>> files_;
  std::map<std::pair<const Module*, uint64_t>, SymbolFrame> cache_;
};

/// `name` demangled by abi::__cxa_demangle when it is a mangled C++ name; otherwise as it is.
std::string DemangleSymbol(const char* name);

/// True for a module path of trainprof's preloaded library (`…/libtrainprof_inject.so`).
bool IsTrainprofModule(std::string_view path);

}  // namespace trainprof::collector
