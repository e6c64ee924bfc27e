// Where CPython keeps what the sampler reads (python_async.h): byte offsets of the few fields of
// the interpreter's private structures that lead from a thread to its frames, their code objects,
// names and line tables, per supported version (x86-64 and aarch64 Linux: LP64, the same
// offsets). They are the interpreter's internal layout, not its API: out-of-process samplers
// (py-spy, austin) carry the same tables. Nothing here is read from Python headers at build time;
// tests/unit/inject/py_layout_headers_test.cc checks each table with offsetof against the headers
// of every interpreter the build machine has (tests/CMakeLists.txt finds them).
//
// Sources (each version's own headers, release builds with the GIL, no Py_DEBUG), field by field:
//   _PyRuntimeState.autoTSSkey (3.10, 3.11: .gilstate.autoTSSkey)   Include/internal/pycore_runtime.h
//   Py_tss_t._is_initialized, ._key          Include/cpython/pythread.h
//   PyThreadState.frame (3.10), .cframe (3.11, 3.12), .current_frame (3.13), thread_id,
//     datastack_chunk, datastack_top         Include/cpython/pystate.h
//   _PyCFrame.current_frame (3.11, 3.12)     Include/cpython/pystate.h
//   _PyStackChunk.previous, size, top, data  Include/cpython/pystate.h
//   PyFrameObject.f_back, f_code, f_trace, f_lasti, f_lineno (3.10)   Include/cpython/frameobject.h
//   _PyInterpreterFrame.f_code (3.13: f_executable), previous, prev_instr (3.13: instr_ptr),
//     owner, localsplus                      Include/internal/pycore_frame.h
//   PyCodeObject.co_firstlineno, co_filename, co_qualname (3.10: co_name), co_linetable,
//     _co_firsttraceable, co_code_adaptive (3.10: co_code), co_version (3.12+)   Include/cpython/code.h
//   PyASCIIObject / PyCompactUnicodeObject   Include/cpython/unicodeobject.h
//   PyBytesObject.ob_sval                    Include/cpython/bytesobject.h
// Tables: 3.10 (3.10.13), 3.11 (3.11.2, 3.11.7), 3.12 (3.12.1), 3.13 (3.13.0); the layouts do not
// change within a minor version (CPython's ABI rule for these structures in a release series).
// Not supported: other versions, free-threaded builds (Py_GIL_DISABLED: other thread-state and
// object layouts) and debug builds (Py_REF_DEBUG moves _PyRuntime's fields): ResolvePyProcess says
// which, and a sample keeps its native frames.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject::stacks {

/// How a thread state leads to its frames.
enum class PyFrameChain : uint8_t {
  kFrameObjects,  ///< 3.10: PyThreadState.frame, a PyFrameObject; f_back links them (heap objects)
  kCFrame,        ///< 3.11, 3.12: PyThreadState.cframe->current_frame, an _PyInterpreterFrame
  kThreadState,   ///< 3.13: PyThreadState.current_frame, an _PyInterpreterFrame
};

struct PyLayout {
  uint32_t minor;  ///< 3.<minor>
  PyFrameChain chain;

  // _PyRuntime: the thread-specific key PyGILState uses to find a thread's own PyThreadState.
  size_t runtime_tss;  ///< offset of the Py_tss_t (int _is_initialized; pthread_key_t _key)

  // PyThreadState.
  size_t ts_frame;            ///< the field `chain` names (frame, cframe or current_frame)
  size_t ts_thread_id;        ///< unsigned long: pthread_self() of the thread it belongs to
  size_t ts_datastack_chunk;  ///< _PyStackChunk* (3.11+)
  size_t ts_datastack_top;    ///< PyObject**: end of the live part of the current chunk (3.11+)
  size_t ts_read;             ///< bytes of the thread state read (covers the fields above)

  size_t cframe_current_frame;  ///< kCFrame

  // _PyStackChunk (3.11+): previous, size (bytes of the whole chunk), top (live words of a
  // previous chunk), then data.
  size_t chunk_previous, chunk_size, chunk_top, chunk_data;

  // The frame: _PyInterpreterFrame (3.11+) or PyFrameObject (3.10: f_code, f_back, f_lasti).
  size_t frame_code, frame_previous;
  size_t frame_instr;   ///< 3.11, 3.12: prev_instr; 3.13: instr_ptr; 3.10: int f_lasti (code units)
  size_t frame_owner;   ///< 3.11+
  size_t frame_trace, frame_lineno;  ///< 3.10: f_trace (non-NULL: f_lineno is the line), f_lineno
  size_t frame_header;  ///< bytes of the frame read (3.11+: those before localsplus)
  int owner_generator;  ///< FRAME_OWNED_BY_GENERATOR (3.11+)
  int owner_shim;       ///< owners from this up are C-stack shims (3.12+: FRAME_OWNED_BY_CSTACK); 256: none

  // PyCodeObject (3.11+: a PyVarObject, ob_size = code units at 16).
  size_t code_firstlineno, code_filename, code_linetable;
  size_t code_qualname;        ///< 3.10: co_name (3.10 code objects have no qualname)
  size_t code_firsttraceable;  ///< 3.11+; 0: none
  size_t code_adaptive;        ///< 3.11+: co_code_adaptive, the instructions (2-byte code units)
  size_t code_code;            ///< 3.10: co_code, a bytes object of the instructions; 0: none
  /// 3.12+: uint32_t co_version, a serial each code object gets when made (from the
  /// interpreter's counter; 0 once it has run out); 0: no such field (3.10, 3.11)
  size_t code_version;

  // str: PyASCIIObject {refcnt, type, length, hash, state, ...}; compact ASCII data follows it;
  // PyCompactUnicodeObject adds utf8_length, utf8; compact non-ASCII data follows that.
  size_t str_length, str_state, str_ascii_size, str_utf8_length, str_utf8, str_compact_size;
  // state bit fields (GCC's bit order, LSB first): interned:2, kind:3, compact:1, ascii:1.
};

/// The layout for CPython 3.<major/minor of version_hex> (PY_VERSION_HEX, as `Py_Version` holds
/// it), or nullptr for a version without one (all but 3.10 to 3.13 now). Release builds with
/// the GIL only: the caller rules out the others (ResolvePyProcess).
const PyLayout* PyLayoutFor(unsigned long version_hex);

}  // namespace trainprof::inject::stacks
