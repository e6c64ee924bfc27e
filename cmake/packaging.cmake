# What an installed prefix holds besides the targets' own install() rules (launcher/: bin/trainprof,
# inject/: the library, python/: the shim): the docs. And the Debian package of that prefix:
# `cpack -G DEB` in the build folder (README.md, "Install"). Included by the top CMakeLists.txt.

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")

set(TRAINPROF_PACKAGE_MAINTAINER "trainprof maintainers <maintainers@users.noreply.a-seed-594d2a14.example>"
    CACHE STRING "Maintainer field of the Debian package (cpack -G DEB)")

set(CPACK_PACKAGE_NAME trainprof)
set(CPACK_PACKAGE_VENDOR trainprof)
set(CPACK_PACKAGE_CONTACT "${TRAINPROF_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "profiler for deep-learning training runs")
string(CONCAT CPACK_PACKAGE_DESCRIPTION  # one string: a list's ';' would reach the control file
    "trainprof runs a training command with a preloaded library that records every process it starts "
    "(DataLoader workers, ranks), NVTX ranges, CUDA activity and PyTorch's training phases, and reports "
    "where the time went: `trainprof run --follow-children -- python train.py`, then `trainprof report`.")
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # trainprof_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The shim is run by any python3 on the machine; the launcher itself needs none.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS python3)
find_program(TRAINPROF_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(TRAINPROF_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the binaries' own needs, with versions
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6, libstdc++6, libgcc-s1, zlib1g, libdw1, libunwind8")
endif()
# Python writes __pycache__ into the shim's folders when root runs it: prerm removes them, so that
# `dpkg -r` leaves no folder behind.
set(_shim "${CPACK_PACKAGING_INSTALL_PREFIX}/${TRAINPROF_INSTALL_SHIMDIR}")
file(WRITE ${PROJECT_BINARY_DIR}/debian/prerm
     "#!/bin/sh\nset -e\nrm -rf '${_shim}/__pycache__' '${_shim}/_trainprof/__pycache__'\n")
file(CHMOD ${PROJECT_BINARY_DIR}/debian/prerm PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE
     GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/prerm)
include(CPack)
