#!/bin/sh
# Shell-level tests of the real `trainprof` binary: cli_test.sh CASE TRAINPROF STAND_IN_LIB
#
# STAND_IN_LIB is an empty shared library used as the injection library (TRAINPROF_INJECT_LIB),
# so these tests need neither inject/ nor a GPU; no trace file is written unless a case writes a
# fake one itself. Exit 0 = pass, 77 = skipped, anything else = fail.
set -u
case_name=$1
TP=$2
export TRAINPROF_INJECT_LIB="$3"
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH TRAINPROF_OUTPUT_DIR TRAINPROF_ROOT_PID LD_PRELOAD

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainprof-cli-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
tmp=$(pwd -P)
lib=$(realpath "$TRAINPROF_INJECT_LIB")

fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in out.txt err.txt; do
    [ -f "$tmp/$f" ] && { echo "--- $f:" >&2; cat "$tmp/$f" >&2; }
  done
  exit 1
}

# run_tp ARGS...: runs trainprof, stdout to out.txt, stderr to err.txt, status in $rc.
run_tp() {
  "$TP" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" </dev/null
  rc=$?
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "expected exit status $1, got $rc"; }
expect_out() { grep -q -- "$1" "$tmp/out.txt" || fail "stdout lacks '$1'"; }
expect_err() { grep -q -- "$1" "$tmp/err.txt" || fail "stderr lacks '$1'"; }
env_of() { sed -n "s/^$1=//p" "$tmp/out.txt"; }

case "$case_name" in
version)
  run_tp --version
  expect_rc 0
  grep -Eq '^trainprof [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out.txt" || fail "bad version line"
  ;;
help)
  run_tp --help
  expect_rc 0; expect_out "run"; expect_out "report"
  run_tp run --help
  expect_rc 0; expect_out "--follow-children"; expect_out "--trace"; expect_out "--output"
  expect_out "Exit status"
  run_tp report --help
  expect_rc 0
  ;;
no_arguments)
  run_tp
  expect_rc 2; expect_err "Usage"
  ;;
missing_command)
  for args in "run" "run --" "run -o out" "run --follow-children --"; do
    # shellcheck disable=SC2086
    run_tp $args
    expect_rc 2; expect_err "COMMAND"
  done
  ;;
unknown_option)
  run_tp run --bogus -- true
  expect_rc 2; expect_err "unknown option --bogus"
  run_tp report --top 3 --bogus x
  expect_rc 2; expect_err "unknown option --bogus"
  run_tp frobnicate
  expect_rc 2; expect_err "unknown subcommand 'frobnicate'"
  run_tp --bogus report x  # before the subcommand (CLI11 alone: "A subcommand is required")
  expect_rc 2; expect_err "unknown option --bogus (options come after the subcommand"
  # -o with its folder forgotten: not a folder named "--" and the command run.
  run_tp run -o -- touch ran
  expect_rc 2; expect_err '"--" is not a folder name here'
  [ ! -e ran ] && [ ! -e -- ] || fail "run -o -- ran the command or made a folder named --"
  for sub in "run -o '' -- touch ran" "report -o '' x" "export -o '' x"; do
    eval "run_tp $sub"
    expect_rc 2; expect_err "an empty path"
  done
  [ ! -e ran ] || fail "the command ran despite the usage error"
  # `--option=` with nothing after it is an error, not an option that takes the next argument.
  for sub in "run --backtrace= -o out -- touch ran" "run --trace= -- touch ran" "report --format= x" "export --format= x"; do
    eval "run_tp $sub"
    expect_rc 2; expect_err "needs a value after the '='"
  done
  [ ! -e ran ] || fail "the command ran despite the usage error"
  # ... but the launched command's own arguments are its own, with or without `--`.
  run_tp run -o out -- sh -c 'echo "[$1]"' sh --output=
  expect_rc 0; expect_out "\[--output=\]"
  run_tp run -o out sh -c 'echo "[$1]"' sh --trace=
  expect_rc 0; expect_out "\[--trace=\]"
  ;;
bad_trace)
  run_tp run -o out --trace=cuda,gpu -- touch ran
  expect_rc 2; expect_err "'gpu'"; expect_err "cuda, nvtx, python"
  [ ! -e ran ] || fail "the command ran"
  run_tp run -o out --trace=-cuda,-nvtx,-python -- touch ran
  expect_rc 2; expect_err "no source"
  ;;
bad_pattern)
  run_tp run -o 'out-%x' -- touch ran
  expect_rc 2; expect_err "%x"
  [ ! -e ran ] || fail "the command ran"
  ;;
exit_code)
  run_tp run -o out -- sh -c 'exit 7'
  expect_rc 7
  run_tp run -o out -- true
  expect_rc 0
  expect_err "no trace file was written in $tmp/out"
  run_tp run -o out --report -- sh -c 'exit 4'  # no trace: no report, the command's status
  expect_rc 4
  ;;
signal_exit)
  run_tp run -o out -- sh -c 'kill -TERM $$'
  expect_rc 143
  run_tp run -o out -- sh -c 'kill -KILL $$'
  expect_rc 137
  ;;
not_found)
  run_tp run -o out -- trainprof-no-such-command --flag
  expect_rc 127; expect_err "trainprof: trainprof-no-such-command: command not found"
  grep -q "trace file" "$tmp/err.txt" && fail "printed a trace summary"
  run_tp run -o out -- ./no/such/file
  expect_rc 127; expect_err "trainprof: ./no/such/file: No such file or directory"
  # Nothing ran: no empty trace directory is left (one that was there stays).
  [ ! -e out ] || fail "left an empty output directory"
  run_tp run -o 'pid-%p' -- ./no/such/file
  expect_rc 127
  ls -d pid-* >/dev/null 2>&1 && fail "left an empty %p output directory"
  mkdir kept
  run_tp run -o kept -- ./no/such/file
  [ -d kept ] || fail "removed a directory that was there before"
  ;;
not_executable)
  echo 'echo hi' > script.txt
  chmod 644 script.txt
  run_tp run -o out -- ./script.txt
  expect_rc 126; expect_err "trainprof: ./script.txt: Permission denied"
  mkdir adir
  run_tp run -o out -- ./adir
  expect_rc 126
  ;;
stdin_passthrough)
  out=$(echo hi | "$TP" run -o out -- cat 2>"$tmp/err.txt") || fail "status $?"
  [ "$out" = "hi" ] || fail "stdout was '$out'"
  # stderr of the command passes through too, next to trainprof's own line
  "$TP" run -o out -- sh -c 'echo to-stderr >&2' >"$tmp/out.txt" 2>"$tmp/err.txt" </dev/null
  expect_err "^to-stderr$"
  [ -s "$tmp/out.txt" ] && fail "trainprof wrote to stdout"
  ;;
dash_arguments)
  run_tp run -o out -- sh -c 'printf "%s|" "$@"' sh -x --y -- -o z --help
  expect_rc 0
  [ "$(cat out.txt)" = "-x|--y|--|-o|z|--help|" ] || fail "arguments changed: $(cat out.txt)"
  # Without --: options after COMMAND belong to COMMAND.
  run_tp run -o out printf '%s|' -x --trace -o --version
  expect_rc 0
  [ "$(cat out.txt)" = "-x|--trace|-o|--version|" ] || fail "arguments changed: $(cat out.txt)"
  ;;
environment)
  run_tp run -o out -- sh -c 'echo SELF=$$; env'
  expect_rc 0
  # A sanitizer build preloads its sanitizer runtime first (set by ctest in those builds).
  rt=${TRAINPROF_SANITIZER_RUNTIME:+$TRAINPROF_SANITIZER_RUNTIME:}
  [ "$(env_of LD_PRELOAD)" = "$rt$lib" ] || fail "LD_PRELOAD=$(env_of LD_PRELOAD)"
  [ "$(env_of NVTX_INJECTION64_PATH)" = "$lib" ] || fail "NVTX_INJECTION64_PATH"
  [ "$(env_of TRAINPROF_LIB)" = "$lib" ] || fail "TRAINPROF_LIB"
  [ "$(env_of TRAINPROF_OUTPUT_DIR)" = "$tmp/out" ] || fail "TRAINPROF_OUTPUT_DIR=$(env_of TRAINPROF_OUTPUT_DIR)"
  [ "$(env_of TRAINPROF_FOLLOW_CHILDREN)" = "0" ] || fail "TRAINPROF_FOLLOW_CHILDREN"
  [ "$(env_of TRAINPROF_TRACE)" = "cuda,nvtx,python" ] || fail "TRAINPROF_TRACE"
  [ "$(env_of TRAINPROF_ROOT_PID)" = "$(env_of SELF)" ] || fail "TRAINPROF_ROOT_PID"
  [ "$(env_of CUDA_INJECTION64_PATH)" = "$lib" ] || fail "CUDA_INJECTION64_PATH=$(env_of CUDA_INJECTION64_PATH)"
  [ -d out ] || fail "output directory not created"
  # An existing LD_PRELOAD entry is kept, after ours (the stand-in itself, the one library we
  # know loads; it is deduplicated, so use a second copy).
  cp "$lib" other.so
  # (ASAN_OPTIONS: a sanitizer build of trainprof would refuse a preload before its runtime.)
  LD_PRELOAD="$tmp/other.so" ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
    run_tp run -o out --follow-children -- env
  [ "$(env_of LD_PRELOAD)" = "$rt$lib:$tmp/other.so" ] || fail "LD_PRELOAD=$(env_of LD_PRELOAD)"
  [ "$(env_of TRAINPROF_FOLLOW_CHILDREN)" = "1" ] || fail "TRAINPROF_FOLLOW_CHILDREN with --follow-children"
  ;;
trace_list)
  run_tp run -o out --trace=-python -- env
  [ "$(env_of TRAINPROF_TRACE)" = "cuda,nvtx" ] || fail "TRAINPROF_TRACE=$(env_of TRAINPROF_TRACE)"
  run_tp run -o out --trace cuda -- env
  [ "$(env_of TRAINPROF_TRACE)" = "cuda" ] || fail "TRAINPROF_TRACE=$(env_of TRAINPROF_TRACE)"
  [ -z "$(env_of NVTX_INJECTION64_PATH)" ] || fail "NVTX_INJECTION64_PATH set without nvtx"
  run_tp run -o out --trace=-cuda -- env
  [ -z "$(env_of CUDA_INJECTION64_PATH)" ] || fail "CUDA_INJECTION64_PATH set without cuda"
  [ "$(env_of NVTX_INJECTION64_PATH)" = "$lib" ] || fail "NVTX_INJECTION64_PATH with --trace=-cuda"
  run_tp run -o out --trace python --trace=nvtx -- env
  [ "$(env_of TRAINPROF_TRACE)" = "nvtx,python" ] || fail "TRAINPROF_TRACE=$(env_of TRAINPROF_TRACE)"
  ;;
pid_directory)
  run_tp run -o "runs/%h/d-%p" -- sh -c 'echo $$ > pid.txt; echo "$TRAINPROF_OUTPUT_DIR" > dir.txt'
  expect_rc 0
  pid=$(cat pid.txt)
  want="$tmp/runs/$(hostname)/d-$pid"
  [ -d "$want" ] || fail "no directory $want"
  [ "$(cat dir.txt)" = "$want" ] || fail "TRAINPROF_OUTPUT_DIR=$(cat dir.txt), want $want"
  expect_err "$want"
  ;;
output_default)
  run_tp run -- true
  run_tp run -- true
  n=$(find . -maxdepth 1 -type d -name 'trainprof-[0-9]*-[0-9]*' | wc -l)
  [ "$n" -eq 2 ] || fail "expected 2 default directories, found $n"
  ;;
kill_term)
  "$TP" run -o out -- sh -c 'echo $$ > child.pid; exec sleep 30' >"$tmp/out.txt" 2>"$tmp/err.txt" &
  tp=$!
  i=0
  while [ ! -s child.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -s child.pid ] || fail "the command did not start"
  start=$(date +%s)
  kill -TERM "$tp"
  wait "$tp"
  rc=$?
  expect_rc 143
  [ $(( $(date +%s) - start )) -lt 10 ] || fail "trainprof took too long to end"
  kill -0 "$(cat child.pid)" 2>/dev/null && fail "the command still runs"
  ;;
terminal_interrupt)
  # Ctrl-C in a terminal reaches the command once (from the tty), not twice.
  command -v python3 >/dev/null || exit 77
  python3 - "$TP" <<'EOF' || fail "see above"
import os, pty, sys, time
tp = sys.argv[1]
script = "trap 'echo INT >> ints' INT; echo $$ > child.pid; while [ ! -e stop ]; do sleep 0.05; done"
pid, fd = pty.fork()
if pid == 0:
    os.execv(tp, [tp, "run", "-o", "out", "--", "sh", "-c", script])
for _ in range(100):
    if os.path.exists("child.pid"):
        break
    time.sleep(0.1)
time.sleep(0.3)
os.write(fd, b"\x03")
time.sleep(1.0)
open("stop", "w").close()
_, status = os.waitpid(pid, 0)
ints = open("ints").read().split() if os.path.exists("ints") else []
if len(ints) != 1:
    sys.exit(f"the command saw {len(ints)} SIGINTs")
EOF
  ;;
root_end_status)
  # The command writes a header-only trace for itself, as the library would, then dies of SIGTERM;
  # trainprof must record that end in the header (FileHeader::end_kind at offset 64).
  cat > fake.sh <<'EOF'
le32() { printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"; }
runid() {  # TRAINPROF_RUN_ID (32 hex digits) as 16 bytes, as the library writes FileHeader::run_id
  h=$TRAINPROF_RUN_ID
  while [ -n "$h" ]; do b=${h%"${h#??}"}; h=${h#??}; printf "$(printf '\\%03o' $((0x$b)))"; done
}
f="$TRAINPROF_OUTPUT_DIR/pid-$$.trace"
{ printf 'TRPROF\r\n'; le32 1; le32 16384; le32 65536; le32 0; le32 $$; } > "$f"
head -c 100 /dev/zero >> "$f"  # up to FileHeader::run_id (offset 128)
runid >> "$f"
head -c 16 /dev/zero >> "$f"  # up to sizeof(FileHeader) = 160
kill -TERM $$
EOF
  run_tp run -o "out-%p" -- sh fake.sh
  expect_rc 143
  f=$(ls out-*/pid-*.trace) || fail "no trace file"
  set -- $(od -An -tu4 -j64 -N8 "$f")
  [ "$1" = 2 ] && [ "$2" = 15 ] || fail "end_kind/end_code = $1/$2, want 2/15"
  [ "$(od -An -tu8 -j72 -N8 "$f" | tr -d ' ')" != 0 ] || fail "end_monotonic_ns not set"
  expect_err "1 trace file, 1 process, 160 B in $tmp/out-"
  expect_err "next: trainprof report $tmp/out-"
  ;;
last_output_wins)
  run_tp run -o first -o second -- true
  expect_rc 0
  [ -d second ] && [ ! -e first ] || fail "-o given twice: the last should win"
  ;;
missing_library)
  TRAINPROF_INJECT_LIB="$tmp/nope.so" run_tp run -o out -- touch ran
  expect_rc 1; expect_err "TRAINPROF_INJECT_LIB"
  [ ! -e ran ] || fail "the command ran"
  ;;
inject_lib_not_a_library)
  # A file the loader cannot preload: refused before COMMAND starts, naming the variable, the file
  # and what is wrong (it used to run COMMAND unprofiled, then ask whether it was static or setuid).
  mkdir adir
  printf '\177ELF\001\001\001' > elf32.so; head -c 60 /dev/zero >> elf32.so  # a 32-bit ELF header
  for bad in "/etc/passwd:is not an ELF file (it starts with 'root:x:0')" "$tmp/adir:is a directory" \
             "/bin/sh:is a position-independent executable, not a shared library" \
             "$tmp/elf32.so:is a 32-bit ELF file; this trainprof needs a 64-bit shared library"; do
    file=${bad%%:*}; why=${bad#*:}
    TRAINPROF_INJECT_LIB="$file" run_tp run -o out -- touch ran
    expect_rc 1
    expect_err "trainprof: TRAINPROF_INJECT_LIB=$file: the file $why"
    expect_err "touch was not run"
    [ ! -e ran ] || fail "the command ran with TRAINPROF_INJECT_LIB=$file"
    grep -q "statically linked" "$tmp/err.txt" && fail "asked whether the command is static"
  done
  ;;
umask_modes)
  # The trace directory is private by default, whatever the process umask; --umask changes it.
  mode_of() { stat -c %a "$1"; }
  umask 022
  run_tp run -o out -- env
  expect_rc 0
  [ "$(mode_of out)" = 700 ] || fail "trace directory mode $(mode_of out), want 700"
  [ "$(env_of TRAINPROF_UMASK)" = 077 ] || fail "TRAINPROF_UMASK=$(env_of TRAINPROF_UMASK)"
  run_tp run --umask 027 -o "runs/%p" -- env
  d=$(env_of TRAINPROF_OUTPUT_DIR)
  [ "$(mode_of "$d")" = 750 ] && [ "$(mode_of runs)" = 750 ] || fail "modes $(mode_of runs) $(mode_of "$d"), want 750"
  [ "$(env_of TRAINPROF_UMASK)" = 027 ] || fail "TRAINPROF_UMASK=$(env_of TRAINPROF_UMASK)"
  umask 077
  run_tp run --umask 002 -o wide -- true
  [ "$(mode_of wide)" = 775 ] || fail "--umask 002 gave $(mode_of wide), want 775 (exact, not & ~umask)"
  # COMMAND keeps the umask it was started with.
  run_tp run -o out -- sh -c umask
  [ "$(cat out.txt)" = 0077 ] || fail "COMMAND's umask is $(cat out.txt)"
  chmod 755 out
  run_tp run -o out -- true
  [ "$(mode_of out)" = 755 ] || fail "an existing directory's mode changed to $(mode_of out)"
  for bad in 8 0778 1000 abc ""; do
    run_tp run --umask "$bad" -o bad -- touch ran
    expect_rc 2; expect_err "--umask"
  done
  [ ! -e ran ] || fail "the command ran"
  ;;
planted_output_symlink)
  # Another user's symlink in a sticky world-writable directory: not followed by run -o.
  [ "$(id -u)" = 0 ] || exit 77
  mkdir shared victim && chmod 1777 shared
  ln -s "$tmp/victim" shared/run && chown -h 65534:65534 shared/run
  fake='[ -z "${TRAINPROF_OUTPUT_DIR:-}" ] || : > "$TRAINPROF_OUTPUT_DIR/pid-$$.trace"; echo "preload=${LD_PRELOAD:-}"'
  for pattern in shared/run shared/run/%p shared/run/a/b; do
    run_tp run -o "$pattern" -- sh -c "$fake"
    expect_rc 0
    expect_err "is a symlink owned by uid 65534 in the sticky world-writable directory $tmp/shared"
    expect_err "without profiling"
    [ "$(cat out.txt)" = "preload=" ] || fail "the command ran profiled: $(cat out.txt)"
    [ -z "$(ls -A victim)" ] || fail "wrote through the planted link: $(ls -A victim)"
  done
  # Our own link there is followed.
  chown -h 0:0 shared/run
  run_tp run -o shared/run -- sh -c "$fake"
  [ "$(cat out.txt)" != "preload=" ] || fail "our own link was refused: $(cat err.txt)"
  ;;
pattern_value_inside)
  mkdir runs
  TP_V=../up run_tp run -o 'runs/%q{TP_V}' -- true
  expect_rc 0; expect_err "note: %q{TP_V} is '../up'; used as '.._up'"
  [ -d runs/.._up ] && [ ! -e up ] || fail "%q{TP_V}=../up left runs/"
  TP_V=a/b run_tp run -o 'runs/%q{TP_V}-%p' -- true
  ls -d runs/a_b-* >/dev/null 2>&1 && [ ! -e runs/a ] || fail "%q{TP_V}=a/b made a subdirectory"
  TP_V=.. run_tp run -o 'runs/%q{TP_V}' -- true
  [ -d runs/__ ] || fail "%q{TP_V}=.. not replaced"
  [ "$(ls | sort | tr '\n' ' ')" = "err.txt out.txt runs " ] || fail "created outside runs/: $(ls)"
  ;;
*)
  echo "unknown case $case_name" >&2
  exit 2
  ;;
esac
exit 0
