// The sampler's Python frames (python_async.h), read from the interpreter's memory as
// out-of-process samplers (py-spy) read it, from a signal handler: no interpreter call, no lock,
// no allocation. Layouts: python_layout.h.
//
//   this thread's PyThreadState: pthread_getspecific(_PyRuntime's autoTSSkey), the key PyGILState
//     keeps it under (Python/pystate.c, _PyGILState_NoteThreadState); held with or without the
//     GIL; its thread_id must be pthread_self() (a stale value is not used)
//   innermost frame: tstate->cframe->current_frame (3.13: tstate->current_frame); then
//     frame->previous. 3.10: tstate->frame, a PyFrameObject, then f_back, all read through
//     SafeReader (heap objects), the line from f_lasti (or f_lineno while traced). A frame inside the
//     thread's live data stack (tstate->datastack_chunk .. datastack_top: chunks are unlinked
//     before they are freed) is read directly; others (generators' and coroutines' frames, which
//     live in their objects) through SafeReader
//   code objects: the innermost frame's through SafeReader (it may be half pushed or popped, its
//     code just freed), checked to be PyCode_Type with its instruction inside its code; its
//     callers' are calls in progress, holding their code objects: read directly. A frame that
//     does not check out is missed and safe reads go on until one does. Frames not started yet
//     (_PyFrame_IsIncomplete) are left out
//   names: per code object, cached (lock-free, seqlock per slot; keyed by the code object's
//     address, its identity check and the string table): a miss reads the str objects (compact
//     ASCII directly, other kinds through their utf8 copy or re-encoded) and interns them with
//     `intern`, which may refuse (0: the frame is counted as missed)
//   identity check: a code object freed and another made at its address (with its names and line
//     table at their predecessors' addresses: CPython's allocator reuses the last freed block
//     first) must not get the cached names or lines. A hit needs proof that the entry was made
//     from this code object: its co_version where the interpreter numbers code objects (3.12+:
//     a serial from a counter, no two alike until the counter runs out at 2^32, then 0), else a
//     hash of all that the entry gives, read again each time: the qualname and file name as they
//     would be interned, the first line and every byte of the line table (3.10, 3.11, and a
//     co_version of 0)
//   line: from prev_instr and co_linetable (py_linetable.h), remembered per code object by offset
//
// *missed counts frames the thread had that could not be read: an unreadable or implausible frame
// or code object (1, and the walk stops where the chain is lost), a name that could not be
// interned. Frames past the innermost kMaxPythonFrames walked are left out, not counted (a
// truncated stack, as the GIL path truncates it: a deep import is not a failure to read).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "stacks/python_api.h"  // SymbolLookup
#include "stacks/python_layout.h"
#include "stacks/safe_read.h"

namespace trainprof::inject::stacks {

/// The interpreter found in this process (ResolvePyProcess).
struct PyProcess {
  const PyLayout* layout = nullptr;  ///< nullptr: no supported CPython here
  uintptr_t runtime = 0;             ///< &_PyRuntime
  uintptr_t code_type = 0;           ///< &PyCode_Type
  uintptr_t str_type = 0;            ///< &PyUnicode_Type
  uintptr_t frame_type = 0;          ///< &PyFrame_Type (3.10's frames are frame objects)
  unsigned long version = 0;         ///< PY_VERSION_HEX of the interpreter found (0: none or unknown)
  /// A CPython was found but its frames cannot be read: what it is, e.g. "CPython 3.14
  /// free-threaded", "CPython 3.12 debug build", "CPython 3.9" (empty otherwise).
  char unsupported[64] = {};
};

/// Finds the interpreter with `lookup`: its version (Py_Version, 3.11+; else the text of
/// Py_GetVersion(), which it calls), its build (free-threaded: Py_GetVersion says
/// "free-threading"; debug: _Py_NegativeRefcount exists), _PyRuntime, PyCode_Type,
/// PyUnicode_Type and PyFrame_Type. layout stays nullptr with no CPython (no Py_GetVersion or
/// a type missing; unsupported empty) or one without a layout (unsupported says which). Not
/// async-signal-safe (dlsym).
PyProcess ResolvePyProcess(SymbolLookup lookup);

/// PY_VERSION_HEX (release level 0) of a version text "X.Y[.Z]..." (Py_GetVersion()); 0 if none.
unsigned long PyVersionFromString(const char* s);

/// Interns n bytes of UTF-8 from a signal handler: a string id, or 0 when it cannot now.
using AsyncInternFn = uint32_t (*)(void* ctx, const char* s, uint32_t n);

class AsyncPythonWalker {
 public:
  /// Writes the calling thread's Python frames, innermost first, 3 values each (function string
  /// id × 2 + 1, file string id, line) to out[0..max_values); returns the values written.
  /// *missed as above. `epoch` names the string table the ids belong to (cached ids of another
  /// are not used). *cut (when given): the thread had frames beyond the innermost
  /// kMaxPythonFrames walked. Async-signal-safe.
  size_t Capture(const PyProcess& py, const SafeReader& reader, AsyncInternFn intern, void* ctx,
                 uintptr_t epoch, uint64_t* out, size_t max_values, uint32_t* missed, bool* cut = nullptr);

  /// Name look-ups that missed the cache (for tests).
  uint64_t name_misses() const { return name_misses_.load(std::memory_order_relaxed); }
  /// Lines computed from a line table (for tests).
  uint64_t line_misses() const { return line_misses_.load(std::memory_order_relaxed); }

  static constexpr size_t kSlots = 4096;  ///< power of two
  static constexpr size_t kLines = 8;     ///< lines remembered per code object

  struct Names {
    uint32_t function = 0, file = 0;
    bool own = false;
  };
  /// One code object's names. seq: even when stable, odd while a writer fills it (a reader that
  /// sees it odd or changed misses). lines[]: (seq & 0xFFFF) << 48 | offset << 24 | (line + 1).
  /// check: the identity check of the code object it was made from (see the header).
  struct Entry {
    std::atomic<uint32_t> seq{0};
    std::atomic<uint32_t> function{0}, file{0}, own{0};
    std::atomic<uintptr_t> code{0}, epoch{0};
    std::atomic<uint64_t> check{0};
    std::atomic<uint64_t> lines[kLines] = {};
  };

 private:
  Entry* Lookup(uintptr_t code, uint64_t check, uintptr_t epoch, Names* n, uint32_t* gen);
  void Store(uintptr_t code, uint64_t check, uintptr_t epoch, const Names& n);

  std::atomic<uint64_t> name_misses_{0};
  std::atomic<uint64_t> line_misses_{0};
  Entry slots_[kSlots];
};

}  // namespace trainprof::inject::stacks
