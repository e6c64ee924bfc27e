// Names, commands and paths come from traced programs and file systems: any bytes. Before a
// renderer prints them:
//
//   ValidUtf8       every output format: invalid UTF-8 → U+FFFD, exactly as the JSON renderer's
//                   nlohmann::json dump with error_handler_t::replace does
//   EscapeControls  the text report and CSV fields (with formulas neutralised: render.h CsvField):
//                   control characters shown as \t, \n, \r, \xHH (C0 and DEL)
//                   or \u0080..\u009f (C1), so one name stays on one line and tables stay aligned
#pragma once

#include <string>
#include <string_view>

namespace trainprof::collector {

/// `s` with each maximal invalid UTF-8 subsequence (a stray byte, a cut or overlong sequence, a
/// surrogate) replaced by U+FFFD, like nlohmann::json's error_handler_t::replace. Valid input is
/// returned unchanged.
std::string ValidUtf8(std::string_view s);

/// ValidUtf8(s) with control characters escaped: tab, newline and carriage return as \t, \n, \r;
/// other C0 characters and DEL as \xHH; C1 characters as \u00HH. A backslash is not escaped, so
/// the function is idempotent (safe to apply twice).
std::string EscapeControls(std::string_view s);

}  // namespace trainprof::collector
