// The line of an instruction from a CPython code object's line table (co_linetable),
// as PyCode_Addr2Line computes it, without the interpreter: the sampler reads the table's bytes
// itself (python_async.h). Format: CPython's Objects/locations.md (3.11), decoded as
// Objects/codeobject.c does (get_line_delta, next_code_delta, scan_varint, scan_signed_varint).
//
// The table is a sequence of entries. An entry's first byte has bit 7 set; bits 3..6 are its code,
// bits 0..2 the code units it covers minus one. The line starts at co_firstlineno and each entry
// moves it: code 15 (no location: line -1 for its instructions, no move), 14 (long form) and 13
// (no columns) by a signed varint that follows, 11 and 12 by 1 and 2, others (short forms, 10) by 0.
// Varints: 6 bits a byte, least significant first, bit 6 set on all but the last; signed: the
// lowest bit is the sign of the rest.
//
// CPython 3.10's table (PEP 626; Objects/lnotab_notes.txt, decoded as its Objects/codeobject.c
// does: PyLineTable_InitAddressRange, advance) is a sequence of byte pairs: the bytes the entry
// covers (unsigned), then the line's move (signed; -128: no line for those bytes, no move).
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainprof::inject::stacks {

/// The line of the instruction at byte offset `addr` of the code (prev_instr - co_code_adaptive,
/// 2 bytes a code unit) given the table's bytes through `byte(i)` (i < n; it returns -1 when the
/// byte cannot be read: the line is then 0). addr < 0 (a frame not started) → first_line. An
/// instruction with no location → -1; past the table's end → 0 (unknown).
template <typename ByteAt>
int PyLineForAddress(ByteAt byte, size_t n, int first_line, int addr) {
  if (addr < 0) return first_line;
  int line = first_line;
  int start = 0;
  size_t i = 0;
  while (i < n) {
    const int head = byte(i);
    if (head < 0 || (head & 0x80) == 0) return 0;  // unreadable, or not at an entry: give up
    const int code = (head >> 3) & 15;
    const int end = start + ((head & 7) + 1) * 2;
    int delta = 0;
    if (code == 13 || code == 14) {  // a signed varint follows the head
      unsigned value = 0, shift = 0;
      size_t j = i + 1;
      int b;
      do {
        if (j >= n || shift > 28) return 0;
        b = byte(j++);
        if (b < 0) return 0;
        value |= static_cast<unsigned>(b & 63) << shift;
        shift += 6;
      } while (b & 64);
      delta = (value & 1) ? -static_cast<int>(value >> 1) : static_cast<int>(value >> 1);
    } else if (code == 11 || code == 12) {
      delta = code - 10;
    }
    line += delta;
    if (addr < end) return code == 15 ? -1 : line;
    start = end;
    // The next entry starts at the next byte with bit 7 set.
    for (++i; i < n; ++i) {
      const int b = byte(i);
      if (b < 0) return 0;
      if (b & 0x80) break;
    }
  }
  return 0;
}

/// As PyLineForAddress, for CPython 3.10's table (above); addr = f_lasti * 2.
template <typename ByteAt>
int PyLineForAddress310(ByteAt byte, size_t n, int first_line, int addr) {
  if (addr < 0) return first_line;
  int line = first_line;
  int end = 0;
  for (size_t i = 0; i + 1 < n; i += 2) {
    const int size = byte(i), move = byte(i + 1);
    if (size < 0 || move < 0) return 0;  // unreadable
    end += size;
    const int delta = move >= 128 ? move - 256 : move;
    if (delta != -128) line += delta;
    if (addr < end) return delta == -128 ? -1 : line;
  }
  return 0;
}

}  // namespace trainprof::inject::stacks
