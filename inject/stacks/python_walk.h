// The Python part of a stack: the calling thread's Python frames, innermost first, read through
// the CPython C API (python_api.h) while the thread holds the GIL. Never runs Python code: the
// walk calls only C functions of the interpreter (frame and code accessors, attribute getters of
// code objects), with the garbage collector off so that no allocation starts a collection.
//
// Output, per frame, the three values of a Python frame in a STACK record (docs/trace-format.md,
// "Stacks"): function string id × 2 + 1, file string id, line.
//
// Names: the code object's co_qualname (3.11+; co_name before), co_filename, as UTF-8. They are
// looked up once per code object and kept with their string ids in a fixed table (CodeCache);
// the table keeps a reference to each code object so that its address is never reused for
// another while cached. The GIL serialises the walks of one interpreter; a walk that finds the
// table busy (another interpreter's thread) looks names up without it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "stacks/python_api.h"
#include "stacks/stack_capture.h"  // kMaxPythonFrames

namespace trainprof::inject::stacks {

/// Values one Python frame takes in the output.
inline constexpr size_t kValuesPerPythonFrame = 3;

/// Interns n bytes of UTF-8 as a string id of the trace (0: lost, not cached).
using InternFn = uint32_t (*)(void* ctx, const char* s, uint32_t n);

/// True for code of trainprof's own Python shim (a file under a `_trainprof/` folder, or the
/// shim's `python/sitecustomize.py`): its frames are left out, so a phase's innermost Python frame
/// is the user's line, and the shim's start-up is not the program's code. Async-signal-safe.
bool IsOwnPythonFile(const char* file, size_t n);

class PythonWalker {
 public:
  /// Appends the calling thread's Python frames to out (values, 3 per frame, at most
  /// kMaxPythonFrames frames and max_values values); returns the count of values written.
  /// 0 when the thread does not hold the GIL or api.ok is false. `epoch` names the string
  /// table the ids belong to: a new one (a fork child's) empties the name cache. *cut (when
  /// given): the thread had more frames than were written (deeper than kMaxPythonFrames).
  size_t Capture(const PyApi& api, InternFn intern, void* ctx, const void* epoch, uint64_t* out,
                 size_t max_values, bool* cut = nullptr);

  /// Code objects whose names are cached (for tests).
  size_t cached() const { return cached_; }
  /// Times a walk's name lookup missed the cache (for tests).
  uint64_t lookups() const { return lookups_; }
  /// Times a line was computed by the interpreter (PyFrame_GetLineNumber; for tests).
  uint64_t line_lookups() const { return line_lookups_; }

 private:
  static constexpr size_t kLines = 4;  ///< lines remembered per code object
  struct Entry {
    void* code = nullptr;  ///< a reference held for as long as the entry lives
    uint32_t function = 0;
    uint32_t file = 0;
    bool own = false;
    /// The line of the last instructions seen (slot lasti / 2 % kLines; -1: none). 3.11 computes a
    /// frame's line by scanning its code's location table (PyCode_Addr2Line): most of a deep
    /// walk's time without this.
    int32_t lasti[kLines] = {-1, -1, -1, -1};
    int32_t line[kLines] = {};
  };
  static constexpr size_t kSlots = 4096;  ///< power of two
  static constexpr size_t kProbe = 16;

  /// Names of `code` into *e: from the cache (if `use_cache`) or looked up (and cached when
  /// there is room). Returns the cache entry (nullptr when not cached), or false in *ok.
  Entry* Names(const PyApi& api, InternFn intern, void* ctx, void* code, bool use_cache, Entry* e, bool* ok);
  /// The frame's line, through the entry's remembered lines when there is an entry.
  int Line(const PyApi& api, void* frame, Entry* cached);
  bool LookUp(const PyApi& api, InternFn intern, void* ctx, void* code, Entry* e);

  std::atomic_flag busy_ = ATOMIC_FLAG_INIT;
  const void* epoch_ = nullptr;
  size_t cached_ = 0;
  uint64_t lookups_ = 0;
  uint64_t line_lookups_ = 0;
  Entry slots_[kSlots];
};

}  // namespace trainprof::inject::stacks
