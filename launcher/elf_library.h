// Whether a file is a shared library the dynamic loader can preload into the programs trainprof
// runs: TRAINPROF_INJECT_LIB, or the libtrainprof_inject.so found next to trainprof. Checked
// before the command starts, so that a wrong file is an error naming it, not a run that records
// nothing (the loader prints "cannot be preloaded ... ignored" and runs the program unprofiled).
#pragma once

#include <string>

namespace trainprof::launcher {

/// "" if `path` is an ELF shared object of this trainprof's class (64-bit), byte order and machine
/// (ET_DYN without DF_1_PIE: not a position-independent executable), else what is wrong with it:
/// "cannot be read (Permission denied)", "is a directory", "is not an ELF file (it starts with
/// 'root:x:0')", "is a 32-bit ELF file; ...", "is built for AArch64 (e_machine 183), ...", "is an
/// executable (ET_EXEC), not a shared library", "is a position-independent executable, not a
/// shared library", "is cut short ...". Reads the ELF header, the program headers and the dynamic
/// section only.
std::string SharedLibraryProblem(const std::string& path);

}  // namespace trainprof::launcher
