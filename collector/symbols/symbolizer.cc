#include "collector/symbols/symbolizer.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <set>
#include <string_view>
#include <tuple>

#include "trainprof/build_id_hex.h"

namespace trainprof::collector {

namespace {

std::string Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string BuildIdHex(Dwfl_Module* m) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  const int n = dwfl_module_build_id(m, &bits, &vaddr);
  if (n <= 0) return {};
  std::string out(2 * static_cast<size_t>(n) + 1, '\0');
  out.resize(format::BuildIdToHex(bits, static_cast<size_t>(n), out.data(), out.size()));
  return out;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

/// [*lo, *hi): the lowest p_vaddr of the file's PT_LOAD segments and one past the highest
/// (p_vaddr + p_memsz), as the writer's MODULE start/end less the bias (inject/stacks/load_span.h).
/// False when the file has none or its program headers do not read.
bool FileLoadSpan(Dwfl_Module* m, uint64_t* lo, uint64_t* hi) {
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(m, &bias);
  size_t n = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &n) != 0) return false;
  *lo = UINT64_MAX;
  *hi = 0;
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    *lo = std::min<uint64_t>(*lo, ph.p_vaddr);
    *hi = std::max<uint64_t>(*hi, ph.p_vaddr + ph.p_memsz);
  }
  return *hi != 0;
}

/// "2026-12-07 04:11:53 UTC" for CLOCK_REALTIME ns.
std::string UtcTime(uint64_t ns) {
  const time_t t = static_cast<time_t>(ns / 1'000'000'000);
  struct tm tm {};
  char buf[40];
  if (gmtime_r(&t, &tm) == nullptr || std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) return Hex(ns);
  return buf;
}

/// Why a module file recorded without a build id is not the one the process ran ("" if nothing
/// says so): its PT_LOAD span differs from the recorded one, or it was modified after the
/// process started (`start_realtime_ns`, 0: unknown, not checked). Without a build id, the span
/// and the time are what tell a rebuilt file from the one the process mapped.
std::string NotTheRunsFile(Dwfl_Module* mod, const Module& m, const std::string& path, uint64_t start_realtime_ns) {
  const std::string prefix = "is not the file of the run (no build id in the trace; ";
  uint64_t lo = 0, hi = 0;
  const uint64_t want_lo = m.start - m.bias, want_hi = m.end - m.bias;
  if (!FileLoadSpan(mod, &lo, &hi)) return prefix + "its load span does not read)";
  if (lo != want_lo || hi != want_hi) {
    return prefix + "its load span " + Hex(lo) + "-" + Hex(hi) + " is not the recorded " + Hex(want_lo) + "-" + Hex(want_hi) + ")";
  }
  struct stat st {};
  if (start_realtime_ns != 0 && ::stat(path.c_str(), &st) == 0) {
    const uint64_t mtime = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(st.st_mtim.tv_nsec);
    if (st.st_mtim.tv_sec >= 0 && mtime > start_realtime_ns) {
      return prefix + "modified " + UtcTime(mtime) + ", after the process started " + UtcTime(start_realtime_ns) + ")";
    }
  }
  return {};
}

/// Where `pc` sits in its real function's source when code was inlined there: the call site
/// (DW_AT_call_file, DW_AT_call_line) of the outermost inlined scope (DWARF 5, section 3.3.8.1),
/// so that `nvtxRangePushA` inlined from nvToolsExt's header reports the user's line, not the
/// header's. False where no inlined scope covers `pc`.
bool InlinedCallSite(Dwfl_Module* m, GElf_Addr pc, std::string* file, uint32_t* line) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(m, pc, &bias);
  if (cu == nullptr) return false;
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(cu, pc - bias, &scopes);
  if (n <= 0) return false;
  const Dwarf_Die* outermost = nullptr;
  for (int i = 0; i < n; ++i) {
    if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) outermost = &scopes[i];
    if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) break;
  }
  bool found = false;
  Dwarf_Attribute attr;
  Dwarf_Word file_index = 0, call_line = 0;
  Dwarf_Die die;
  if (outermost != nullptr) die = *outermost;
  if (outermost != nullptr && dwarf_formudata(dwarf_attr(&die, DW_AT_call_line, &attr), &call_line) == 0 &&
      dwarf_formudata(dwarf_attr(&die, DW_AT_call_file, &attr), &file_index) == 0) {
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_getsrcfiles(cu, &files, &count) == 0 && file_index < count) {
      if (const char* name = dwarf_filesrc(files, file_index, nullptr, nullptr); name != nullptr) {
        *file = name;
        *line = static_cast<uint32_t>(call_line);
        found = true;
      }
    }
  }
  std::free(scopes);
  return found;
}

/// Native frames that are the NVTX or CUDA entry points or their libraries, not the user's line.
bool IsNativeWrapper(const SymbolFrame& f) {
  if (StartsWith(f.function, "nvtx") || StartsWith(f.function, "cuda") || StartsWith(f.function, "cu")) {
    // cuda*/cu* API names are camel case after the prefix: "cudaMemcpy", "cuCtxSynchronize".
    const std::string_view rest = std::string_view(f.function).substr(StartsWith(f.function, "cuda") ? 4 : 2);
    if (StartsWith(f.function, "nvtx") || (!rest.empty() && rest[0] >= 'A' && rest[0] <= 'Z')) return true;
  }
  if (!f.module) return false;
  const std::string& m = *f.module;
  return StartsWith(m, "libcudart") || StartsWith(m, "libcuda.") || StartsWith(m, "libnvToolsExt");
}

/// Python frames of trainprof's own shim (python/_trainprof/, an installed trainprof package).
bool IsTrainprofPython(const std::string& p) {
  for (const char* pkg : {"-packages/trainprof/", "/python/trainprof/", "/_trainprof/"}) {
    if (p.find(pkg) != std::string::npos) return true;
  }
  static constexpr std::string_view kSite = "/python/sitecustomize.py";  // the shim's (python_walk.h)
  return p.size() >= kSite.size() && std::string_view(p).substr(p.size() - kSite.size()) == kSite;
}

/// Python frames that are not the user's code: the libraries a range or call passes through on
/// its way in — torch (torch.cuda.nvtx, the DataLoader's worker loop), the `nvtx` package's
/// decorators and context managers, and the standard library (multiprocessing's process.py that
/// runs a DataLoader worker, threading, runpy; frozen modules such as `<frozen runpy>`).
bool IsPythonLibrary(const std::string& p) {
  for (const char* pkg : {"-packages/torch/", "-packages/nvtx/", "-packages/lightning/",
                          "-packages/pytorch_lightning/"}) {
    if (p.find(pkg) != std::string::npos) return true;
  }
  if (StartsWith(p, "<frozen ")) return true;
  if (p.find("-packages/") != std::string::npos) return false;
  // The standard library: .../lib/python3.N/... (Debian's /usr/lib/python3.11, a venv's or
  // pyenv's prefix), outside site-packages/dist-packages.
  for (size_t at = p.find("/lib/python3."); at != std::string::npos; at = p.find("/lib/python3.", at + 1)) {
    size_t i = at + 13, digits = 0;
    while (i < p.size() && p[i] >= '0' && p[i] <= '9') ++i, ++digits;
    if (digits > 0 && i < p.size() && p[i] == '/') return true;
  }
  return false;
}

/// Whether `line` (dwfl_module_getsrc's answer for pc) belongs to the compilation unit that holds
/// pc, inside one of its functions: for code without a line table (crt1's `_start`), libdw answers with the nearest line of
/// another unit (a new-user pass saw `_start` at std_thread.h:142); such a frame gets no file.
bool LineOfItsUnit(Dwfl_Module* m, GElf_Addr pc, Dwfl_Line* line) {
  Dwarf_Addr bias = 0;
  Dwarf_Die* cu = dwfl_module_addrdie(m, pc, &bias);
  Dwarf_Die* line_cu = dwfl_linecu(line);
  if (cu == nullptr || line_cu == nullptr || dwarf_dieoffset(cu) != dwarf_dieoffset(line_cu)) return false;
  // ... and a function of that unit holds pc (a unit's low_pc..high_pc can span code of others).
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(cu, pc - bias, &scopes);
  bool in_function = false;
  for (int i = 0; i < n && !in_function; ++i) in_function = dwarf_tag(&scopes[i]) == DW_TAG_subprogram;
  std::free(scopes);
  return in_function;
}

}  // namespace

std::string DemangleSymbol(const char* name) {
  if (name == nullptr) return {};
  int status = 0;
  char* out = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) return name;
  std::string s(out);
  std::free(out);
  return s;
}

bool IsTrainprofModule(std::string_view path) {
  constexpr std::string_view kLib = "libtrainprof_inject.so";
  return path.size() >= kLib.size() && path.substr(path.size() - kLib.size()) == kLib;
}

std::string SymbolFrame::Label() const {
  if (!file) return function;
  return function + " (" + *file + (line ? ":" + std::to_string(*line) : std::string()) + ")";
}

/// One ELF file reported to its own offline Dwfl at bias 0: lookups are by ELF address.
struct Symbolizer::ElfFile {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* module = nullptr;  // null: missing, unreadable, not ELF, build id not the recorded one
  std::string path;
  std::string problem;  // why module is null ("" when it is not, or for a path that is no file)
  ~ElfFile() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

Symbolizer::Symbolizer(const StringPool& strings) : strings_(strings) {}
Symbolizer::~Symbolizer() = default;

Symbolizer::ElfFile* Symbolizer::Open(const Module& m, uint64_t start_realtime_ns) {
  const std::string path(strings_.Get(m.path));
  const std::string build_id = m.build_id == 0 ? std::string() : std::string(strings_.Get(m.build_id));
  std::string key = path + '\0' + build_id;
  if (build_id.empty()) key += '\0' + Hex(m.start - m.bias) + '-' + Hex(m.end - m.bias) + '@' + std::to_string(start_realtime_ns);
  auto [it, fresh] = files_.try_emplace(std::move(key));
  if (!fresh) return it->second.get();
  it->second = std::make_unique<ElfFile>();
  ElfFile& f = *it->second;
  static const Dwfl_Callbacks kCallbacks = {
      .find_elf = dwfl_build_id_find_elf,
      .find_debuginfo = dwfl_standard_find_debuginfo,
      .section_address = dwfl_offline_section_address,
      .debuginfo_path = nullptr,
  };
  f.path = path;
  f.dwfl = dwfl_begin(&kCallbacks);
  if (f.dwfl == nullptr) return &f;
  // libdw opens the file by path (fd -1); base 0: lookups by ELF address.
  Dwfl_Module* mod = dwfl_report_elf(f.dwfl, Basename(path).c_str(), path.c_str(), -1, 0, false);
  dwfl_report_end(f.dwfl, nullptr, nullptr);
  if (mod == nullptr) {  // missing, unreadable or not ELF
    if (StartsWith(path, "/")) f.problem = "is not on this machine, not readable or not an ELF file";
    return &f;
  }
  if (!build_id.empty()) {
    if (const std::string found = BuildIdHex(mod); found != build_id) {  // another build of the file
      f.problem = "was rebuilt since the run (build id " + build_id + " in the trace, " +
                  (found.empty() ? std::string("none") : found) + " in the file)";
      return &f;
    }
  } else if (std::string why = NotTheRunsFile(mod, m, path, start_realtime_ns); !why.empty()) {
    // "the report never names a wrong function" (docs/report.md): a file that may not be the
    // one mapped is not read.
    f.problem = std::move(why);
    return &f;
  }
  f.module = mod;
  return &f;
}

std::vector<Symbolizer::Problem> Symbolizer::KeyedProblems() const {
  std::vector<Problem> out;
  for (const auto& [key, f] : files_) {
    if (f->problem.empty()) continue;
    out.push_back({key, f->path,
                   "stacks: " + f->path + " " + f->problem + ": its frames show as " + Basename(f->path) + "+0xOFFSET"});
  }
  return out;
}

std::vector<std::string> Symbolizer::ProblemLines(std::vector<Problem> problems) {
  std::sort(problems.begin(), problems.end(),
            [](const Problem& a, const Problem& b) { return std::tie(a.key, a.line) < std::tie(b.key, b.line); });
  std::vector<std::string> out;
  std::set<std::string_view> said;  // one per path (several processes, spans or starts of one file)
  std::string_view last_key;
  bool first = true;
  for (const Problem& p : problems) {
    if (!first && p.key == last_key) continue;  // one file's problem from several sources
    first = false;
    last_key = p.key;
    if (!said.insert(p.path).second) continue;
    out.push_back(p.line);
  }
  return out;
}

std::vector<std::string> Symbolizer::Problems() const { return ProblemLines(KeyedProblems()); }

SymbolFrame Symbolizer::Native(const ImageStacks& stacks, uint64_t address) {
  const Module* m = stacks.ModuleOf(address);
  auto [it, fresh] = cache_.try_emplace({m, address});
  if (!fresh) return it->second;
  SymbolFrame& out = it->second;
  if (m == nullptr) {
    out.function = Hex(address);
    return out;
  }
  const std::string_view path = strings_.Get(m->path);
  out.module = Basename(path);
  const uint64_t vaddr = address - m->bias;
  out.function = *out.module + "+" + Hex(vaddr);
  ElfFile* f = Open(*m, stacks.start_realtime_ns);
  if (f->module == nullptr) return out;
  // A return address: the call is the instruction before it (the innermost frame too: the call
  // into trainprof's hook).
  const GElf_Addr pc = vaddr > 0 ? vaddr - 1 : 0;
  if (const char* name = dwfl_module_addrname(f->module, pc); name != nullptr) out.function = DemangleSymbol(name);
  std::string inlined_file;
  uint32_t inlined_line = 0;
  if (InlinedCallSite(f->module, pc, &inlined_file, &inlined_line)) {
    out.file = inlined_file;
    if (inlined_line > 0) out.line = inlined_line;
  } else if (Dwfl_Line* line = dwfl_module_getsrc(f->module, pc); line != nullptr && LineOfItsUnit(f->module, pc, line)) {
    int lineno = 0;
    if (const char* file = dwfl_lineinfo(line, nullptr, &lineno, nullptr, nullptr, nullptr); file != nullptr) {
      out.file = file;
      if (lineno > 0) out.line = static_cast<uint32_t>(lineno);
    }
  }
  return out;
}

ShownStack Symbolizer::Show(const ImageStacks& stacks, uint64_t id) {
  ShownStack out;
  const Stack* s = stacks.Find(id);
  if (s == nullptr) return out;
  out.known = true;
  size_t first_python = SIZE_MAX;
  for (const StackFrame& fr : s->frames) {
    if (fr.cut) {
      SymbolFrame c;
      c.function = kOuterFramesCut;
      c.python = fr.python;
      out.frames.push_back(std::move(c));
      continue;
    }
    if (fr.python) {
      SymbolFrame p;
      p.python = true;
      p.function = std::string(strings_.Get(fr.function));
      p.file = std::string(strings_.Get(fr.file));
      if (fr.line > 0) p.line = fr.line;
      if (first_python == SIZE_MAX) first_python = out.frames.size();
      out.frames.push_back(std::move(p));
      continue;
    }
    const Module* m = stacks.ModuleOf(fr.address);
    if (m != nullptr && IsTrainprofModule(strings_.Get(m->path))) continue;  // trainprof's own frames
    out.frames.push_back(Native(stacks, fr.address));
  }
  out.call_site = out.frames.size();
  if (first_python != SIZE_MAX) {
    // The innermost frame of the user's code; without one (a DataLoader worker's fetch, called
    // by torch's worker loop), the innermost library frame outside trainprof's shim.
    size_t library = SIZE_MAX;
    for (size_t i = first_python; i < out.frames.size(); ++i) {
      if (!out.frames[i].file) continue;  // the cut mark
      const std::string& file = *out.frames[i].file;
      if (IsTrainprofPython(file)) continue;
      if (!IsPythonLibrary(file)) {
        out.call_site = i;
        return out;
      }
      if (library == SIZE_MAX) library = i;
    }
    out.call_site = library != SIZE_MAX ? library : first_python;
    return out;
  }
  for (size_t i = 0; i < out.frames.size(); ++i) {
    if (!IsNativeWrapper(out.frames[i])) {
      out.call_site = i;
      break;
    }
  }
  if (out.call_site == out.frames.size() && !out.frames.empty()) out.call_site = 0;
  return out;
}

bool IsUserFrame(const SymbolFrame& f) {
  if (!f.file) return false;  // no source line, or the cut mark
  if (f.python) return !IsTrainprofPython(*f.file) && !IsPythonLibrary(*f.file);
  return !IsNativeWrapper(f);
}

}  // namespace trainprof::collector
