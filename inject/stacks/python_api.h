// The few CPython C API functions the Python frame capture (python_walk.h) calls, found in the
// process with dlsym: libtrainprof_inject.so never links libpython, so a program without Python
// simply has none of them (Resolve() leaves `ok` false) and its stacks stay native-only.
//
// PyObject*, PyFrameObject*, PyThreadState* and PyCodeObject* are opaque here (void*): nothing
// reads their layouts. Signatures are those of CPython's Include/ (stable since 3.9; the walk
// needs PyFrame_GetCode, PyFrame_GetBack and PyThreadState_GetFrame, new in 3.9, and
// PyGC_Disable, new in 3.10). Supported and tested versions: docs/trace-format.md, "Stacks".
#pragma once

#include <sys/types.h>

namespace trainprof::inject::stacks {

struct PyApi {
  /// The thread state of the calling thread when it holds the GIL, else NULL (3.11 and older:
  /// the GIL holder's; PyGILState_Check tells them apart). `PyThreadState_GetUnchecked` (3.13)
  /// or `_PyThreadState_UncheckedGet` (3.5–3.12). Never fails, never aborts.
  void* (*thread_state)() = nullptr;
  /// PyGILState_Check: 1 if the calling thread holds the GIL (also 1 whenever subinterpreters
  /// turned the check off: hence this_thread_state too).
  int (*gil_check)() = nullptr;
  /// PyGILState_GetThisThreadState: the calling thread's own thread state (NULL if none). The
  /// walk runs only when it is the one thread_state() gives: this thread's, holding the GIL.
  void* (*this_thread_state)() = nullptr;
  /// PyThreadState_GetFrame: new reference to the thread's innermost frame, or NULL.
  void* (*thread_frame)(void* tstate) = nullptr;
  /// PyFrame_GetBack: new reference to the caller's frame, or NULL.
  void* (*frame_back)(void* frame) = nullptr;
  /// PyFrame_GetCode: new reference to the frame's code object (never NULL).
  void* (*frame_code)(void* frame) = nullptr;
  /// PyFrame_GetLineNumber: the line the frame is executing.
  int (*frame_line)(void* frame) = nullptr;
  /// PyFrame_GetLasti (3.11+; optional: NULL before): the index of the frame's last
  /// instruction, or -1; the walk remembers lines by it (PyFrame_GetLineNumber of the same
  /// instruction is the same line).
  int (*frame_lasti)(void* frame) = nullptr;
  /// PyObject_GetAttrString: new reference or NULL with an exception set.
  void* (*get_attr)(void* object, const char* name) = nullptr;
  /// PyUnicode_AsUTF8AndSize: UTF-8 bytes cached in the str object (valid while it lives), or
  /// NULL with an exception set (a lone surrogate in a file name).
  const char* (*utf8)(void* unicode, ssize_t* size) = nullptr;
  /// PyErr_Fetch / PyErr_Restore: set aside and put back the exception that may be pending while
  /// a name is looked up (a failed lookup's own exception is fetched and dropped).
  void (*err_fetch)(void** type, void** value, void** traceback) = nullptr;
  void (*err_restore)(void* type, void* value, void* traceback) = nullptr;
  /// PyGC_Disable / PyGC_Enable (3.10+): 3.11 materialises a frame object per frame the walk
  /// visits, an allocation that may start a garbage collection, whose finalizers are Python code;
  /// the collector is off for the walk (and back on if it was on).
  int (*gc_disable)() = nullptr;
  int (*gc_enable)() = nullptr;
  void (*incref)(void* object) = nullptr;  ///< Py_IncRef (NULL-safe)
  void (*decref)(void* object) = nullptr;  ///< Py_DecRef (NULL-safe)
  /// All of the above found: the walk may run.
  bool ok = false;
};

/// Looks a symbol up (dlsym(RTLD_DEFAULT, name) in the process; a table in unit tests).
using SymbolLookup = void* (*)(const char* name);

/// Fills an api with the functions `lookup` finds; `ok` is true only when every one is there.
/// Not async-signal-safe (dlsym): called outside signal handlers, at most once per process.
PyApi ResolvePyApi(SymbolLookup lookup);

/// dlsym(RTLD_DEFAULT, name).
void* DlsymDefault(const char* name);

}  // namespace trainprof::inject::stacks
