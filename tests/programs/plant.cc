// Plants things at the names the trace of this process's next image would take, then execs
// itself: the library must neither follow a symlink nor overwrite an existing file, and must
// take the next free name.
//
// Usage: tp_plant DIR VICTIM
//   In DIR (the trace directory), for this pid P:
//     pid-P.1.trace  symlink to VICTIM (an existing file the test owns)
//     pid-P.2.trace  a regular file holding "precious\n"
//     pid-P.3.trace  dangling symlink to DIR/created-through-symlink
//   then execs itself as "tp_plant --execd", which records 10 push/pop ranges "after_exec" and
//   prints "execd pid=P". (Its trace must be pid-P.4.trace.)
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--execd") == 0) {
    for (int i = 0; i < 10; ++i) {
      nvtxRangePushA("after_exec");
      nvtxRangePop();
    }
    printf("execd pid=%d\n", getpid());
    return 0;
  }
  if (argc != 3) return 2;
  const std::string dir = argv[1], prefix = dir + "/pid-" + std::to_string(getpid());
  nvtxRangePushA("before_exec");
  nvtxRangePop();
  if (symlink(argv[2], (prefix + ".1.trace").c_str()) != 0) return 3;
  int fd = open((prefix + ".2.trace").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0 || write(fd, "precious\n", 9) != 9) return 3;
  close(fd);
  if (symlink((dir + "/created-through-symlink").c_str(), (prefix + ".3.trace").c_str()) != 0) return 3;
  printf("planted pid=%d\n", getpid());
  fflush(stdout);
  execl("/proc/self/exe", argv[0], "--execd", static_cast<char*>(nullptr));
  perror("execl");
  return 4;
}
