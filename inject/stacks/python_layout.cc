#include "stacks/python_layout.h"

namespace trainprof::inject::stacks {

namespace {

// Offsets from the headers named in python_layout.h; each checked with offsetof
// (tests/unit/inject/py_layout_headers_test.cc) against the version in parentheses.

// CPython 3.10 (3.10.13): frame objects, no qualname, the 3.10 line table (py_linetable.h).
constexpr PyLayout k310{
    .minor = 10,
    .chain = PyFrameChain::kFrameObjects,
    .runtime_tss = 584,  // _PyRuntime.gilstate.autoTSSkey
    // PyThreadState: frame, thread_id; no data stack.
    .ts_frame = 24, .ts_thread_id = 176, .ts_datastack_chunk = 0, .ts_datastack_top = 0, .ts_read = 184,
    .cframe_current_frame = 0,
    .chunk_previous = 0, .chunk_size = 0, .chunk_top = 0, .chunk_data = 0,
    // PyFrameObject: f_code, f_back, f_lasti, f_trace, f_lineno; read up to f_iblock.
    .frame_code = 32, .frame_previous = 24, .frame_instr = 96, .frame_owner = 0, .frame_trace = 72,
    .frame_lineno = 100, .frame_header = 104, .owner_generator = -1, .owner_shim = 256,
    // PyCodeObject: co_firstlineno, co_filename, co_linetable, co_name, co_code.
    .code_firstlineno = 40, .code_filename = 104, .code_linetable = 120, .code_qualname = 112,
    .code_firsttraceable = 0, .code_adaptive = 0, .code_code = 48, .code_version = 0,
    // str: PyASCIIObject still has `wchar_t *wstr` (48 bytes); PyCompactUnicodeObject 72.
    .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_utf8_length = 48, .str_utf8 = 56,
    .str_compact_size = 72,
};

// CPython 3.11 (3.11.2, 3.11.7).
constexpr PyLayout k311{
    .minor = 11,
    .chain = PyFrameChain::kCFrame,
    .runtime_tss = 592,  // _PyRuntime.gilstate.autoTSSkey (gilstate at 568)
    // PyThreadState: cframe, thread_id, datastack_chunk, datastack_top; bytes read.
    .ts_frame = 56, .ts_thread_id = 152, .ts_datastack_chunk = 296, .ts_datastack_top = 304, .ts_read = 312,
    .cframe_current_frame = 8,  // after uint8_t use_tracing
    .chunk_previous = 0, .chunk_size = 8, .chunk_top = 16, .chunk_data = 24,
    // _PyInterpreterFrame: f_code, previous, prev_instr, owner; localsplus at 72.
    .frame_code = 32, .frame_previous = 48, .frame_instr = 56, .frame_owner = 69, .frame_trace = 0,
    .frame_lineno = 0, .frame_header = 72, .owner_generator = 1, .owner_shim = 256,
    // PyCodeObject (_PyCode_DEF).
    .code_firstlineno = 72, .code_filename = 112, .code_linetable = 136, .code_qualname = 128,
    .code_firsttraceable = 168, .code_adaptive = 184, .code_code = 0, .code_version = 0,
    .str_length = 16, .str_state = 32, .str_ascii_size = 48, .str_utf8_length = 48, .str_utf8 = 56,
    .str_compact_size = 72,
};

// CPython 3.12 (3.12.1): autoTSSkey left gilstate, the frame starts with f_code, the C-stack shim
// frame (FRAME_OWNED_BY_CSTACK, 3) came, PyASCIIObject lost wstr.
constexpr PyLayout k312{
    .minor = 12,
    .chain = PyFrameChain::kCFrame,
    .runtime_tss = 1544,  // _PyRuntime.autoTSSkey
    .ts_frame = 56, .ts_thread_id = 136, .ts_datastack_chunk = 232, .ts_datastack_top = 240, .ts_read = 248,
    .cframe_current_frame = 0,
    .chunk_previous = 0, .chunk_size = 8, .chunk_top = 16, .chunk_data = 24,
    .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70, .frame_trace = 0,
    .frame_lineno = 0, .frame_header = 72, .owner_generator = 1, .owner_shim = 3,
    .code_firstlineno = 68, .code_filename = 112, .code_linetable = 136, .code_qualname = 128,
    .code_firsttraceable = 176, .code_adaptive = 192, .code_code = 0, .code_version = 92,
    .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_utf8_length = 40, .str_utf8 = 48,
    .str_compact_size = 56,
};

// CPython 3.13 (3.13.0): no _PyCFrame (PyThreadState.current_frame), f_executable and instr_ptr
// (the instruction executing, not the previous one: the same offset arithmetic).
constexpr PyLayout k313{
    .minor = 13,
    .chain = PyFrameChain::kThreadState,
    .runtime_tss = 2160,  // _PyRuntime.autoTSSkey (after _Py_DebugOffsets and the rest)
    .ts_frame = 72, .ts_thread_id = 152, .ts_datastack_chunk = 232, .ts_datastack_top = 240, .ts_read = 248,
    .cframe_current_frame = 0,
    .chunk_previous = 0, .chunk_size = 8, .chunk_top = 16, .chunk_data = 24,
    .frame_code = 0, .frame_previous = 8, .frame_instr = 56, .frame_owner = 70, .frame_trace = 0,
    .frame_lineno = 0, .frame_header = 72, .owner_generator = 1, .owner_shim = 3,
    .code_firstlineno = 68, .code_filename = 112, .code_linetable = 136, .code_qualname = 128,
    .code_firsttraceable = 184, .code_adaptive = 200, .code_code = 0, .code_version = 92,
    .str_length = 16, .str_state = 32, .str_ascii_size = 40, .str_utf8_length = 40, .str_utf8 = 48,
    .str_compact_size = 56,
};

}  // namespace

const PyLayout* PyLayoutFor(unsigned long version_hex) {
  const unsigned long major = (version_hex >> 24) & 0xFF, minor = (version_hex >> 16) & 0xFF;
  if (major != 3) return nullptr;
  switch (minor) {
    case 10: return &k310;
    case 11: return &k311;
    case 12: return &k312;
    case 13: return &k313;
    default: return nullptr;
  }
}

}  // namespace trainprof::inject::stacks
