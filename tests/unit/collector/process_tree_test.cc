// Process images → process tree: parent links, roles, ranks, exec merge, exits, lifetimes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collector/read/process_tree.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

const Process* ByPid(const Trace& t, int32_t pid) {
  for (const Process& p : t.processes)
    if (p.pid == pid) return &p;
  return nullptr;
}

TEST(ProcessTree, TorchrunWithTwoRanksFromThreeFiles) {
  TraceBuilder launcher(100, 1, 1'000);
  launcher.Command({"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node=2", "train.py"})
      .HeaderEnd(fmt::EndKind::kExit, 0, 90'000);
  TraceBuilder r0(101, 100, 2'000), r1(102, 100, 2'500);
  r0.Env("RANK", "0").Env("LOCAL_RANK", "0").Env("WORLD_SIZE", "2");
  r1.Env("RANK", "1").Env("LOCAL_RANK", "1").Env("WORLD_SIZE", "2");
  // Files in no particular order.
  Trace t = TraceOf({&r1, &launcher, &r0});
  ASSERT_EQ(t.processes.size(), 3u);
  EXPECT_EQ(t.processes[0].pid, 100);
  EXPECT_EQ(t.processes[1].pid, 101);
  EXPECT_EQ(t.processes[2].pid, 102);
  EXPECT_EQ(t.processes[0].parent, -1);
  EXPECT_EQ(t.processes[1].parent, 0);
  EXPECT_EQ(t.processes[2].parent, 0);
  EXPECT_EQ(t.processes[0].children, (std::vector<int>{1, 2}));
  EXPECT_EQ(t.processes[0].depth, 0);
  EXPECT_EQ(t.processes[2].depth, 1);
  EXPECT_EQ(t.processes[0].role, "launcher");
  EXPECT_EQ(t.processes[1].role, "rank 0");
  EXPECT_EQ(t.processes[2].role, "rank 1");
  EXPECT_FALSE(t.processes[0].rank);
  EXPECT_EQ(t.processes[2].rank, 1);
  EXPECT_EQ(t.processes[2].local_rank, 1);
  EXPECT_EQ(t.processes[2].world_size, 2);
}

TEST(ProcessTree, RolesMainForkedChildRoleRecordInheritedRank) {
  TraceBuilder main(10, 1, 1'000);
  TraceBuilder rank(11, 10, 2'000);
  rank.Env("RANK", "0");
  TraceBuilder worker(12, 11, 3'000);  // a DataLoader worker: inherits RANK=0
  worker.Env("RANK", "0").Flags(fmt::kFlagForkedChild);
  TraceBuilder named(13, 11, 3'100);
  named.Env("RANK", "0").Flags(fmt::kFlagForkedChild);
  named.Role(named.Thread(13), "DataLoader worker");
  TraceBuilder tool(14, 10, 4'000);  // an exec'd helper (nvidia-smi)
  Trace t = TraceOf({&main, &rank, &worker, &named, &tool});
  EXPECT_EQ(ByPid(t, 10)->role, "launcher");  // no RANK itself, a child with RANK
  EXPECT_EQ(ByPid(t, 11)->role, "rank 0");
  EXPECT_EQ(ByPid(t, 12)->role, "forked child");
  EXPECT_EQ(ByPid(t, 12)->rank, 0);  // still shows the rank it belongs to
  EXPECT_EQ(ByPid(t, 13)->role, "DataLoader worker");
  EXPECT_EQ(ByPid(t, 14)->role, "child");
  EXPECT_EQ(ByPid(t, 12)->depth, 2);

  TraceBuilder solo(20, 1, 1'000), helper(21, 20, 2'000);
  Trace u = TraceOf({&solo, &helper});
  EXPECT_EQ(ByPid(u, 20)->role, "main");
  EXPECT_EQ(ByPid(u, 21)->role, "child");
}

TEST(ProcessTree, ParentIsTheProcessAliveAtTheChildsStart) {
  // pid 200 is used twice; the child of the second one must not hang under the first.
  TraceBuilder first(200, 1, 1'000), second(200, 1, 50'000), child(300, 200, 60'000), early(301, 200, 2'000);
  first.HeaderEnd(fmt::EndKind::kExit, 0, 10'000);
  second.HeaderEnd(fmt::EndKind::kExit, 0, 90'000);
  Trace t = TraceOf({&child, &second, &first, &early});
  ASSERT_EQ(t.processes.size(), 4u);
  const Process* c = ByPid(t, 300);
  ASSERT_GE(c->parent, 0);
  EXPECT_EQ(t.processes[c->parent].start_ns, 50'000u);
  const Process* e = ByPid(t, 301);
  ASSERT_GE(e->parent, 0);
  EXPECT_EQ(t.processes[e->parent].start_ns, 1'000u);
}

TEST(ProcessTree, OrphanLinksToTheProcessThatForkedIt) {
  // sh (10) forks a subshell (11) that forks 12 and exits at once: 12 opens its trace as an
  // orphan (ppid 1). The subshell's kFork record still names it.
  TraceBuilder sh(10, 1, 1'000), sub(11, 10, 2'000), orphan(12, 1, 2'600), stranger(13, 1, 2'700);
  int t = sub.Thread(11);
  sub.Fork(t, 2'500, 12);
  sub.HeaderEnd(fmt::EndKind::kExit, 0, 2'550);
  orphan.Flags(fmt::kFlagForkedChild);
  Trace tr = TraceOf({&sh, &sub, &orphan, &stranger});
  const Process* o = ByPid(tr, 12);
  ASSERT_GE(o->parent, 0);
  EXPECT_EQ(tr.processes[o->parent].pid, 11);
  EXPECT_EQ(o->role, "forked child");
  EXPECT_EQ(o->depth, 2);
  EXPECT_EQ(ByPid(tr, 13)->parent, -1);
}

TEST(ProcessTree, SameHostOnly) {
  TraceBuilder parent(10, 1, 1'000), child(11, 10, 2'000);
  parent.Host("a");
  child.Host("b");
  Trace t = TraceOf({&parent, &child});
  EXPECT_EQ(ByPid(t, 11)->parent, -1);
  EXPECT_EQ(ByPid(t, 11)->role, "main");
}

TEST(ProcessTree, ExecImagesMergeIntoOneProcess) {
  TraceBuilder img0(400, 1, 1'000), img1(400, 1, 5'000);
  img0.Command({"/bin/sh", "-c", "python train.py"}).HeaderEnd(fmt::EndKind::kExec, 0, 4'000).Dropped(2);
  int t0 = img0.Thread(400);
  img0.Mark(t0, 1'500, "x");
  img0.Exec(t0, 3'900, "/usr/bin/python3");
  img1.ImageIndex(1).Command({"/usr/bin/python3", "train.py"}).Executable("/usr/bin/python3.11").Dropped(3);
  img1.HeaderEnd(fmt::EndKind::kExit, 1, 9'000);
  int t1 = img1.Thread(400);
  img1.Mark(t1, 6'000, "y");
  Trace t = TraceOf({&img1, &img0});
  ASSERT_EQ(t.processes.size(), 1u);
  const Process& p = t.processes[0];
  ASSERT_EQ(p.images.size(), 2u);
  EXPECT_EQ(p.images[0].image_index, 0u);
  EXPECT_EQ(p.start_ns, 1'000u);
  EXPECT_EQ(p.end_ns, 9'000u);
  EXPECT_EQ(p.wall_ns, 8'000u);
  EXPECT_EQ(p.records, 6u);  // string, mark, string, exec | string, mark
  EXPECT_EQ(p.records, img0.records() + img1.records());
  EXPECT_EQ(p.dropped, 5u);
  EXPECT_EQ(p.exit.kind, fmt::EndKind::kExit);
  EXPECT_EQ(p.exit.code, 1);
  Report r = Analyze(t, {});
  EXPECT_EQ(r.processes[0].command, "/usr/bin/python3 train.py");
  EXPECT_EQ(r.processes[0].executable, "/usr/bin/python3.11");
  EXPECT_EQ(r.processes[0].files, (std::vector<std::string>{"pid-400.trace", "pid-400.1.trace"}));
  EXPECT_EQ(r.processes[0].exit_text, "exit 1");
}

TEST(ProcessTree, ExitKindsAndTheirSources) {
  TraceBuilder parent(1, 0, 100);
  int tp = parent.Thread(1);
  parent.HeaderEnd(fmt::EndKind::kExit, 3, 100'000);
  TraceBuilder signaled(2, 1, 200);
  signaled.HeaderEnd(fmt::EndKind::kSignal, 9, 5'000);
  TraceBuilder recorded(3, 1, 300);  // only a kProcessEnd record
  int t3 = recorded.Thread(3);
  recorded.ProcessEnd(t3, 7'000, fmt::EndKind::kExit, 0);
  TraceBuilder reaped(4, 1, 400);  // killed; the parent's waitpid saw it
  int t4 = reaped.Thread(4);
  reaped.Mark(t4, 8'000, "last words");
  parent.ChildExit(tp, 9'000, 4, fmt::EndKind::kSignal, 15);
  TraceBuilder lost(5, 1, 500);  // nobody saw it end
  int t5 = lost.Thread(5);
  lost.Mark(t5, 6'500, "x");
  TraceBuilder exec(6, 1, 600);
  exec.HeaderEnd(fmt::EndKind::kExec, 0, 700);
  TraceBuilder returned(7, 1, 800);
  returned.HeaderEnd(fmt::EndKind::kReturned, 0, 900);
  Trace t = TraceOf({&parent, &signaled, &recorded, &reaped, &lost, &exec, &returned});
  Report r = Analyze(t, {});
  auto row = [&](int32_t pid) -> const ProcessRow& {
    for (const ProcessRow& p : r.processes)
      if (p.pid == pid) return p;
    throw std::runtime_error("no pid");
  };
  EXPECT_EQ(row(1).exit_text, "exit 3");
  EXPECT_EQ(row(1).exit_kind, "exit");
  EXPECT_EQ(row(1).exit_code, 3);
  EXPECT_EQ(row(1).exit_source, "header");
  EXPECT_EQ(row(2).exit_text, "signal 9 (SIGKILL)");
  EXPECT_EQ(row(2).exit_kind, "signal");
  EXPECT_EQ(row(3).exit_text, "exit 0");
  EXPECT_EQ(row(3).exit_source, "process_end");
  EXPECT_EQ(row(3).wall_ns, 7'000u - 300u);  // to the kProcessEnd record
  EXPECT_EQ(row(4).exit_text, "signal 15 (SIGTERM)");
  EXPECT_EQ(row(4).exit_source, "parent_wait");
  EXPECT_EQ(row(4).wall_ns, 9'000u - 400u);  // to the parent's waitpid, not its last record
  EXPECT_EQ(row(5).exit_text, "unknown");
  EXPECT_EQ(row(5).exit_kind, "unknown");
  EXPECT_FALSE(row(5).exit_code);
  EXPECT_EQ(row(5).exit_source, "");
  // Its last image ended in exec and no image follows: the exec'd program left no trace.
  EXPECT_EQ(row(6).exit_text, "unknown");
  EXPECT_EQ(row(6).recorded, "until_exec");
  EXPECT_EQ(row(7).exit_text, "returned");
  EXPECT_EQ(row(2).wall_ns, 4'800u);  // header end
  bool noted = false;
  for (const std::string& w : r.warnings) noted = noted || w == "pid 5: no exit record (killed?)";
  EXPECT_TRUE(noted);
}

// A process killed by a signal has no end of its own: its parent's waitpid() (CHILD_EXIT record)
// or the launcher (header end time) saw when it ended; its last record did not.
TEST(ProcessTree, KilledProcessEndsWhenItWasReaped) {
  const uint64_t s = 1'000'000'000;
  TraceBuilder parent(10, 1, s);
  int tp = parent.Thread(10);
  TraceBuilder killed(11, 10, s + 1'000'000);  // SIGKILLed 400 ms after its start, idle since 141 µs
  int tk = killed.Thread(11);
  killed.Mark(tk, s + 1'000'000 + 141'000, "loaded");
  TraceBuilder empty_worker(12, 10, s + 2'000'000);  // a worker that recorded nothing
  empty_worker.Flags(fmt::kFlagForkedChild);
  TraceBuilder exited(13, 10, s + 3'000'000);  // its own end record wins over a late waitpid
  int te = exited.Thread(13);
  exited.ProcessEnd(te, s + 10'000'000, fmt::EndKind::kExit, 0);
  parent.ChildExit(tp, s + 52'000'000, 12, fmt::EndKind::kSignal, 15);
  parent.ChildExit(tp, s + 401'000'000, 11, fmt::EndKind::kSignal, 9);
  parent.ChildExit(tp, s + 900'000'000, 13, fmt::EndKind::kExit, 0);
  TraceBuilder by_launcher(14, 1, s + 4'000'000);  // the launcher reaped it: header end time
  by_launcher.HeaderEnd(fmt::EndKind::kSignal, 9, s + 700'000'000);
  by_launcher.Mark(by_launcher.Thread(14), s + 5'000'000, "x");
  parent.ProcessEnd(tp, s + 950'000'000, fmt::EndKind::kExit, 0);

  Trace t = TraceOf({&parent, &killed, &empty_worker, &exited, &by_launcher});
  const Process* k = ByPid(t, 11);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->wall_ns, 400'000'000u);
  EXPECT_EQ(k->end_ns, s + 401'000'000);
  EXPECT_TRUE(k->end_known);
  EXPECT_EQ(k->exit.source, ExitInfo::Source::kParentWait);
  EXPECT_EQ(ByPid(t, 12)->wall_ns, 50'000'000u);
  EXPECT_EQ(ByPid(t, 13)->wall_ns, 7'000'000u);
  EXPECT_EQ(ByPid(t, 13)->exit.source, ExitInfo::Source::kProcessEnd);
  EXPECT_EQ(ByPid(t, 14)->wall_ns, 696'000'000u);

  Report r = Analyze(t, {});
  EXPECT_EQ(r.processes.at(1).pid, 11);
  EXPECT_EQ(r.processes.at(1).wall_ns, 400'000'000u);
  EXPECT_NE(RenderText(r).find("signal 9 (SIGKILL)"), std::string::npos);
}

// Ranks in separate pid namespaces (containers, unshare --pid) are each pid 1, on one host.
TEST(ProcessTree, SamePidInTwoPidNamespacesIsTwoProcesses) {
  TraceBuilder a(1, 0, 1'000), b(1, 0, 1'200);
  a.Identity(4026531836, 500).Env("RANK", "0").HeaderEnd(fmt::EndKind::kExit, 0, 5'000);
  b.Identity(4026532999, 500).Env("RANK", "1").ImageIndex(1).HeaderEnd(fmt::EndKind::kExit, 0, 6'000);
  Trace t = TraceOf({&a, &b});
  ASSERT_EQ(t.processes.size(), 2u);  // was one, rank 1, ending at 6'000
  EXPECT_EQ(t.processes[0].rank, 0);
  EXPECT_EQ(t.processes[1].rank, 1);
  EXPECT_EQ(t.processes[0].images.size(), 1u);
}

// A pid reused within one clock tick has the same start_ticks: the earlier image ended in exit,
// not exec, so the later one is another process. The writer named the later file pid-50.1.trace.
TEST(ProcessTree, PidReusedWithinOneTickIsTwoProcessesExecIsOne) {
  TraceBuilder first(50, 10, 1'000), second(50, 10, 3'000);
  first.Identity(77, 900).HeaderEnd(fmt::EndKind::kExit, 3, 2'000);
  second.Identity(77, 900).ImageIndex(1).HeaderEnd(fmt::EndKind::kExit, 4, 4'000);
  Trace t = TraceOf({&first, &second});
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].exit.code, 3);
  EXPECT_EQ(t.processes[1].exit.code, 4);

  TraceBuilder before(60, 10, 1'000), after(60, 10, 3'000), other(60, 10, 5'000);
  before.Identity(77, 900).HeaderEnd(fmt::EndKind::kExec, 0, 2'000);
  after.Identity(77, 900).ImageIndex(1).HeaderEnd(fmt::EndKind::kExit, 0, 4'000);
  other.Identity(77, 950).ImageIndex(2).HeaderEnd(fmt::EndKind::kExit, 0, 6'000);  // another start time
  Trace u = TraceOf({&other, &after, &before});
  ASSERT_EQ(u.processes.size(), 2u);
  EXPECT_EQ(u.processes[0].images.size(), 2u);
  EXPECT_EQ(u.processes[0].recorded, Process::Recorded::kYes);
  EXPECT_EQ(u.processes[1].images.size(), 1u);
}

TEST(ProcessTree, ExitStatusIsTheLowEightBits) {
  TraceBuilder a(1, 0, 100), b(2, 0, 200), c(3, 0, 300), d(4, 0, 400);
  a.HeaderEnd(fmt::EndKind::kExit, 256, 1'000);
  b.HeaderEnd(fmt::EndKind::kExit, -1, 1'000);
  c.HeaderEnd(fmt::EndKind::kExit, 1000, 1'000);
  int td = d.Thread(4);
  d.ProcessEnd(td, 900, fmt::EndKind::kExit, 511);
  Trace t = TraceOf({&a, &b, &c, &d});
  EXPECT_EQ(ByPid(t, 1)->exit.code, 0);
  EXPECT_EQ(ByPid(t, 2)->exit.code, 255);
  EXPECT_EQ(ByPid(t, 3)->exit.code, 232);
  EXPECT_EQ(ByPid(t, 4)->exit.code, 255);
}

// A --follow-children parent forked 77 (no trace: static, setuid) and 78 (traced), and reaped 77.
TEST(ProcessTree, ChildWithoutTraceIsShownFromItsParentsRecords) {
  TraceBuilder parent(70, 1, 1'000), child(78, 70, 2'600);
  parent.Flags(fmt::kFlagFollowChildren).Identity(5, 100).HeaderEnd(fmt::EndKind::kExit, 0, 9'000);
  child.Flags(fmt::kFlagFollowChildren | fmt::kFlagForkedChild).Identity(5, 101).HeaderEnd(fmt::EndKind::kExit, 0, 3'000);
  int tp = parent.Thread(70);
  parent.Fork(tp, 2'000, 77);
  parent.ChildExit(tp, 2'400, 77, fmt::EndKind::kExit, 7);
  parent.Fork(tp, 2'500, 78);
  parent.ChildExit(tp, 3'100, 78, fmt::EndKind::kExit, 0);
  Trace t = TraceOf({&parent, &child});
  ASSERT_EQ(t.processes.size(), 3u);
  const Process* lost = ByPid(t, 77);
  ASSERT_NE(lost, nullptr);
  EXPECT_EQ(lost->recorded, Process::Recorded::kNotRecorded);
  EXPECT_EQ(t.processes[lost->parent].pid, 70);
  EXPECT_EQ(lost->start_ns, 2'000u);
  EXPECT_EQ(lost->end_ns, 2'400u);
  EXPECT_EQ(lost->exit.kind, fmt::EndKind::kExit);
  EXPECT_EQ(lost->exit.code, 7);
  EXPECT_EQ(lost->exit.source, ExitInfo::Source::kParentWait);
  EXPECT_EQ(ByPid(t, 78)->recorded, Process::Recorded::kYes);
  Report r = Analyze(t, {});
  for (const ProcessRow& row : r.processes) {
    if (row.pid != 77) continue;
    EXPECT_EQ(row.recorded, "no");
    EXPECT_TRUE(row.files.empty());
    EXPECT_EQ(row.exit_text, "exit 7");
  }
  std::string text = RenderText(r);
  EXPECT_NE(text.find("(not recorded)"), std::string::npos) << text;
  EXPECT_NE(text.find("known from its parent's fork and wait records"), std::string::npos);

  // Without --follow-children, children were not meant to record: none is made up.
  TraceBuilder alone(80, 1, 1'000);
  int ta = alone.Thread(80);
  alone.Fork(ta, 2'000, 81);
  Trace u = TraceOf({&alone});
  EXPECT_EQ(u.processes.size(), 1u);
}

// Python's subprocess starts children with vfork (no FORK record): a --follow-children parent
// reaped 90 (a setuid program: no trace) and 91 (traced), and 90 again later (its pid reused by a
// second untraced child). Each wait no traced child claims is a child not recorded, its start
// unknown. Before, they appeared nowhere ("4 processes" for 8). Without --follow-children the
// same records make nothing up.
TEST(ProcessTree, ReapedChildrenWithoutForkRecordOrTraceAreShown) {
  for (const bool follow : {true, false}) {
    SCOPED_TRACE(follow);
    TraceBuilder parent(89, 1, 1'000), child(91, 89, 2'500);
    parent.Flags(follow ? fmt::kFlagFollowChildren : 0u).Identity(5, 100).HeaderEnd(fmt::EndKind::kExit, 0, 9'000);
    child.Flags(follow ? fmt::kFlagFollowChildren : 0u).Identity(5, 101).HeaderEnd(fmt::EndKind::kExit, 0, 3'000);
    int tp = parent.Thread(89);
    parent.ChildExit(tp, 2'400, 90, fmt::EndKind::kExit, 1);
    parent.ChildExit(tp, 3'100, 91, fmt::EndKind::kExit, 0);
    parent.ChildExit(tp, 5'000, 90, fmt::EndKind::kSignal, 9);
    Trace t = TraceOf({&parent, &child});
    if (!follow) {
      EXPECT_EQ(t.processes.size(), 2u);
      continue;
    }
    ASSERT_EQ(t.processes.size(), 4u);
    std::vector<const Process*> lost;
    for (const Process& p : t.processes)
      if (p.pid == 90) lost.push_back(&p);
    ASSERT_EQ(lost.size(), 2u);
    for (const Process* p : lost) {
      EXPECT_EQ(p->recorded, Process::Recorded::kNotRecorded);
      EXPECT_FALSE(p->start_known);
      EXPECT_EQ(t.processes[p->parent].pid, 89);
      EXPECT_EQ(p->exit.source, ExitInfo::Source::kParentWait);
    }
    EXPECT_EQ(lost[0]->end_ns, 2'400u);
    EXPECT_EQ(lost[0]->exit.kind, fmt::EndKind::kExit);
    EXPECT_EQ(lost[0]->exit.code, 1);
    EXPECT_EQ(lost[1]->end_ns, 5'000u);
    EXPECT_EQ(lost[1]->exit.kind, fmt::EndKind::kSignal);
    EXPECT_EQ(lost[1]->exit.code, 9);
    EXPECT_TRUE(ByPid(t, 91)->start_known);
    EXPECT_EQ(ByPid(t, 91)->recorded, Process::Recorded::kYes);
    Report r = Analyze(t, {});
    std::string text = RenderText(r);
    EXPECT_NE(text.find("(not recorded)"), std::string::npos) << text;
    EXPECT_NE(text.find("signal 9 (SIGKILL)"), std::string::npos) << text;
    EXPECT_NE(text.find("a setuid, setgid or\n  file-capability program (the loader drops LD_PRELOAD)"), std::string::npos) << text;
    EXPECT_NE(text.find("Start and Wall \"-\": a child started by vfork or clone"), std::string::npos) << text;
    nlohmann::json j = nlohmann::json::parse(RenderJson(r));
    size_t unknown_start = 0;
    for (const auto& p : j["processes"]) {
      if (p["pid"] != 90) continue;
      EXPECT_EQ(p["recorded"], "no");
      EXPECT_EQ(p["start_known"], false);
      EXPECT_TRUE(p["wall_ns"].is_null());
      ++unknown_start;
    }
    EXPECT_EQ(unknown_start, 2u);
  }
}

// Children made up from fork records are capped (a runaway or hostile trace): the rest counted.
TEST(ProcessTree, NotRecordedChildrenAreCapped) {
  TraceBuilder parent(2, 1, 1'000);
  parent.Flags(fmt::kFlagFollowChildren);
  int t = parent.Thread(2);
  for (int i = 0; i < static_cast<int>(kMaxNotRecorded) + 3; ++i) parent.Fork(t, 2'000 + i, 100 + i);
  Trace tr = TraceOf({&parent});
  EXPECT_EQ(tr.processes.size(), kMaxNotRecorded + 1);
  EXPECT_EQ(tr.not_recorded_omitted, 3u);
  Report r = Analyze(tr, {});
  bool said = false;
  for (const std::string& w : r.warnings) said = said || w.find("3 more children that left no trace") == 0;
  EXPECT_TRUE(said);
}

// unshare --pid --fork: the parent's FORK names the child's pid in the parent's namespace, the
// child's own header pid 1 (ppid 0) in the new one.
TEST(ProcessTree, ForkIntoAnotherPidNamespaceLinksItsRoot) {
  TraceBuilder unshare(40, 10, 1'000), rank(1, 0, 2'010);
  unshare.Flags(fmt::kFlagFollowChildren).Identity(4026531836, 100);
  rank.Flags(fmt::kFlagFollowChildren | fmt::kFlagForkedChild).Identity(4026532000, 101).Env("RANK", "0");
  rank.HeaderEnd(fmt::EndKind::kReturned, 0, 4'900);
  int t = unshare.Thread(40);
  unshare.ForkIntoOtherNamespace(t, 2'000, 41);
  unshare.ChildExit(t, 5'000, 41, fmt::EndKind::kExit, 0);
  Trace tr = TraceOf({&unshare, &rank});
  ASSERT_EQ(tr.processes.size(), 2u);  // no made-up "not recorded" 41
  const Process* r = ByPid(tr, 1);
  ASSERT_GE(r->parent, 0);
  EXPECT_EQ(tr.processes[r->parent].pid, 40);
  EXPECT_EQ(r->exit.kind, fmt::EndKind::kExit);  // unshare's waitpid of 41 saw the status
  EXPECT_EQ(r->exit.source, ExitInfo::Source::kParentWait);
}

TEST(ProcessTree, FilesOfTwoRunsAreNamedInTheWarnings) {
  TraceBuilder a(1, 0, 1'000), b(2, 0, 1'000), c(3, 0, 1'000);
  a.RunId(0x11);
  b.RunId(0x22);
  c.RunId(0x22);
  Report r = Analyze(TraceOf({&a, &b, &c}), {});
  bool said = false;
  for (const std::string& w : r.warnings) {
    said = said || (w.find(" holds the trace files of 2 runs") != std::string::npos &&
                    w.find("11111111: 1 file,") != std::string::npos && w.find("22222222: 2 files") != std::string::npos);
  }
  EXPECT_TRUE(said) << testing::PrintToString(r.warnings);
  Report one = Analyze(TraceOf({&b, &c}), {});
  for (const std::string& w : one.warnings) EXPECT_EQ(w.find("runs"), std::string::npos) << w;
  // One run per host directory, reported together: that is a multi-host job, not a mix-up.
  std::vector<uint8_t> bytes_a = a.Build(), bytes_b = b.Build();
  Report hosts = Analyze(LoadTraceBytes({{"host1/pid-1.trace", bytes_a}, {"host2/pid-2.trace", bytes_b}}), {});
  EXPECT_EQ(hosts.processes.size(), 2u);
  for (const std::string& w : hosts.warnings) EXPECT_EQ(w.find("runs"), std::string::npos) << w;
}

TEST(ProcessTree, DescribeExit) {
  EXPECT_EQ(DescribeExit({fmt::EndKind::kSignal, 6, ExitInfo::Source::kHeader}), "signal 6 (SIGABRT)");
  EXPECT_EQ(DescribeExit({fmt::EndKind::kSignal, 200, ExitInfo::Source::kHeader}), "signal 200");
  EXPECT_EQ(DescribeExit({}), "unknown");
}

}  // namespace
}  // namespace trainprof::collector
