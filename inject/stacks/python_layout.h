// Where CPython keeps what the sampler reads (python_async.h): byte offsets of the few fields of
// the interpreter's private structures that lead from a thread to its frames, their code objects,
// names and line tables, per supported version (x86-64 and aarch64 Linux: LP64, the same
// offsets). They are the interpreter's internal layout, not its API: out-of-process samplers
// (py-spy, austin) carry the same tables. Nothing here is read from Python headers at build time.
//
// Sources (CPython 3.11's headers, tags v3.11.0 .. v3.11.x: the layouts did not change within
// 3.11), field by field:
//   _PyRuntimeState.gilstate.autoTSSkey      Include/internal/pycore_runtime.h (struct
//                                            _gilstate_runtime_state)
//   Py_tss_t._is_initialized, ._key          Include/cpython/pythread.h
//   PyThreadState.cframe, thread_id, datastack_chunk, datastack_top   Include/cpython/pystate.h
//   _PyCFrame.current_frame                  Include/cpython/pystate.h
//   _PyStackChunk.previous, size, top, data  Include/cpython/pystate.h
//   _PyInterpreterFrame.f_code, previous, prev_instr, owner   Include/internal/pycore_frame.h
//   PyCodeObject.co_firstlineno, co_filename, co_qualname, co_linetable, _co_firsttraceable,
//     co_code_adaptive                       Include/cpython/code.h (_PyCode_DEF)
//   PyASCIIObject / PyCompactUnicodeObject   Include/cpython/unicodeobject.h
//   PyBytesObject.ob_sval                    Include/cpython/bytesobject.h
// 3.11 was checked against Debian's 3.11.2 headers and pyenv's 3.11.7 headers with offsetof, and
// is checked at run time by tests/e2e/test_python_async.py on both interpreters (code and str
// offsets against objects' id(); the rest by walks compared with the interpreter's own frames). Other versions have no table yet:
// 3.12 moved the thread-state key and reordered the frame and the code object, 3.13 dropped
// _PyCFrame (it publishes _Py_DebugOffsets in _PyRuntime instead, which a 3.13 table should use);
// without a table a sample keeps its native frames and counts its Python frames as missed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject::stacks {

struct PyLayout {
  uint32_t minor;  ///< 3.<minor>

  // _PyRuntime: the thread-specific key PyGILState uses to find a thread's own PyThreadState.
  size_t runtime_tss;  ///< offset of the Py_tss_t (int _is_initialized; pthread_key_t _key)

  // PyThreadState.
  size_t ts_cframe;
  size_t ts_thread_id;        ///< unsigned long: pthread_self() of the thread it belongs to
  size_t ts_datastack_chunk;  ///< _PyStackChunk*
  size_t ts_datastack_top;    ///< PyObject**: end of the live part of the current chunk
  size_t ts_read;             ///< bytes of the thread state read (covers the fields above)

  size_t cframe_current_frame;

  // _PyStackChunk: previous, size (bytes of the whole chunk), top (live words of a previous
  // chunk), then data.
  size_t chunk_previous, chunk_size, chunk_top, chunk_data;

  // _PyInterpreterFrame.
  size_t frame_code, frame_previous, frame_prev_instr, frame_owner;
  size_t frame_header;  ///< bytes of the frame before localsplus (what is read of a frame)
  int owner_generator;  ///< FRAME_OWNED_BY_GENERATOR
  int owner_cstack;     ///< FRAME_OWNED_BY_CSTACK (3.12+), -1 when the version has none

  // PyCodeObject (a PyVarObject: ob_type at 8, ob_size = code units at 16).
  size_t code_firstlineno, code_filename, code_qualname, code_linetable, code_firsttraceable;
  size_t code_adaptive;  ///< co_code_adaptive: the instructions (2-byte code units)

  // str: PyASCIIObject {refcnt, type, length, hash, state, ...}; compact ASCII data follows it;
  // PyCompactUnicodeObject adds utf8_length, utf8; compact non-ASCII data follows that.
  size_t str_length, str_state, str_ascii_size, str_utf8_length, str_utf8, str_compact_size;
  // state bit fields (GCC's bit order, LSB first): interned:2, kind:3, compact:1, ascii:1.
};

/// The layout for CPython 3.<major/minor of version_hex> (PY_VERSION_HEX, as `Py_Version` holds
/// it), or nullptr for a version without one (all but 3.11 now).
const PyLayout* PyLayoutFor(unsigned long version_hex);

}  // namespace trainprof::inject::stacks
