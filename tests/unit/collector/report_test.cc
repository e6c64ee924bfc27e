// The three renderers: JSON parsed back, CSV contents, the text layout (golden).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/base/text_safety.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

// torchrun (pid 100) with two ranks; rank 0 has a DataLoader worker. Times in ns from 1 s.
struct SmallRun {
  TraceBuilder launcher{100, 1, 1'000'000'000};
  TraceBuilder rank0{101, 100, 1'010'000'000};
  TraceBuilder rank1{102, 100, 1'020'000'000};
  TraceBuilder worker{103, 101, 1'100'000'000};

  SmallRun() {
    launcher.Command({"/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc-per-node=2", "train.py"})
        .HeaderEnd(fmt::EndKind::kExit, 0, 3'000'000'000);
    rank0.Command({"/usr/bin/python3", "-u", "train.py", "--epochs", "1"})
        .Env("RANK", "0").Env("LOCAL_RANK", "0").Env("WORLD_SIZE", "2")
        .HeaderEnd(fmt::EndKind::kExit, 0, 2'910'000'000);
    rank1.Command({"/usr/bin/python3", "-u", "train.py", "--epochs", "1"})
        .Env("RANK", "1").Env("LOCAL_RANK", "1").Env("WORLD_SIZE", "2")
        .HeaderEnd(fmt::EndKind::kSignal, 9, 2'020'000'000);
    worker.Command({"/usr/bin/python3", "-u", "train.py", "--epochs", "1"}).Env("RANK", "0").Flags(fmt::kFlagForkedChild);

    int t0 = rank0.Thread(101);
    rank0.ThreadName(t0, 101, "python3");
    uint64_t now = 1'100'000'000;
    for (uint64_t ms : {100, 120, 110, 130}) {  // steps of 100..130 ms; forward is half of it
      rank0.Push(t0, now, "train_step");
      rank0.Push(t0, now + 1'000'000, "forward");
      rank0.Pop(t0, now + 1'000'000 + ms * 500'000);
      rank0.Pop(t0, now + ms * 1'000'000);
      now += 200'000'000;
    }
    rank0.Mark(t0, now, "checkpoint");
    int t1 = rank1.Thread(102);
    rank1.Push(t1, 1'100'000'000, "train_step");
    rank1.Pop(t1, 1'250'000'000);
    rank1.Push(t1, 1'300'000'000, "train_step");  // killed inside its second step
    int tw = worker.Thread(103);
    worker.Role(tw, "DataLoader worker");
    worker.Start(tw, 1'200'000'000, "load batch, \"shuffled\"", 1);
    worker.EndRange(tw, 1'230'000'000, 1);
  }
  Trace Load() const { return TraceOf({&launcher, &rank0, &rank1, &worker}); }
};

TEST(Report, CudaWindowsForLargeTracesUnlessTheKnobSaysOtherwise) {
  const char* saved = std::getenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  const std::string keep = saved == nullptr ? "" : saved;
  ::unsetenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  EXPECT_EQ(CudaWindowRecords(0), 0u);
  EXPECT_EQ(CudaWindowRecords(kAutoWindowTraceBytes - 1), 0u);  // small: every record kept, one window
  EXPECT_EQ(CudaWindowRecords(kAutoWindowTraceBytes), kAutoWindowRecords);
  EXPECT_EQ(CudaWindowRecords(UINT64_MAX), kAutoWindowRecords);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "0", 1);  // one window whatever the size
  EXPECT_EQ(CudaWindowRecords(UINT64_MAX), 0u);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "97", 1);
  EXPECT_EQ(CudaWindowRecords(0), 97u);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "", 1);  // empty: as unset
  EXPECT_EQ(CudaWindowRecords(kAutoWindowTraceBytes), kAutoWindowRecords);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "12x", 1);  // not a number: ignored
  EXPECT_EQ(CudaWindowRecords(kAutoWindowTraceBytes), kAutoWindowRecords);
  EXPECT_EQ(CudaWindowRecords(0), 0u);
  ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", "4294967296", 1);  // past 2^32 - 1: ignored
  EXPECT_EQ(CudaWindowRecords(kAutoWindowTraceBytes), kAutoWindowRecords);
  if (saved == nullptr) {
    ::unsetenv("TRAINPROF_CUDA_WINDOW_RECORDS");
  } else {
    ::setenv("TRAINPROF_CUDA_WINDOW_RECORDS", keep.c_str(), 1);
  }
}

TEST(Report, JsonParsesBackWithEveryField) {
  SmallRun run;
  Trace trace = run.Load();
  Report report = Analyze(trace, {});
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));

  EXPECT_EQ(j["trainprof_version"], TrainprofVersion());
  EXPECT_EQ(j["format_version"], 5);
  EXPECT_EQ(j["summary"]["processes"], 4);
  EXPECT_EQ(j["summary"]["hosts"], 1);
  EXPECT_EQ(j["summary"]["span_ns"], 2'000'000'000);

  ASSERT_EQ(j["files"].size(), 4u);
  const auto& f0 = j["files"][0];
  EXPECT_EQ(f0["path"], "pid-100.trace");
  EXPECT_EQ(f0["pid"], 100);
  EXPECT_EQ(f0["bytes"], fmt::kHeaderRegionSize);
  EXPECT_EQ(f0["bytes_read"], fmt::kHeaderRegionSize);
  EXPECT_EQ(f0["truncated"], false);
  EXPECT_TRUE(f0["errors"].is_array() && f0["errors"].empty());

  ASSERT_EQ(j["processes"].size(), 4u);
  const auto& l = j["processes"][0];
  EXPECT_EQ(l["pid"], 100);
  EXPECT_EQ(l["ppid"], 1);
  EXPECT_TRUE(l["parent_pid"].is_null());
  EXPECT_EQ(l["host"], "node0");
  EXPECT_TRUE(l["rank"].is_null());
  EXPECT_EQ(l["role"], "launcher");
  EXPECT_EQ(l["command"], "/usr/bin/python3 /usr/local/bin/torchrun --nproc-per-node=2 train.py");
  EXPECT_EQ(l["wall_ns"], 2'000'000'000);
  EXPECT_EQ(l["start_ns"], 1'000'000'000);
  EXPECT_EQ(l["end_ns"], 3'000'000'000);
  EXPECT_EQ(l["exit"]["kind"], "exit");
  EXPECT_EQ(l["exit"]["code"], 0);

  const auto& r0 = j["processes"][1];
  EXPECT_EQ(r0["pid"], 101);
  EXPECT_EQ(r0["parent_pid"], 100);
  EXPECT_EQ(r0["rank"], 0);
  EXPECT_EQ(r0["local_rank"], 0);
  EXPECT_EQ(r0["world_size"], 2);
  EXPECT_EQ(r0["role"], "rank 0");
  EXPECT_EQ(r0["events"], run.rank0.records());
  ASSERT_EQ(r0["threads"].size(), 1u);
  EXPECT_EQ(r0["threads"][0]["tid"], 101);
  EXPECT_EQ(r0["threads"][0]["name"], "python3");
  EXPECT_EQ(r0["threads"][0]["events"], run.rank0.records());
  ASSERT_EQ(r0["nvtx_ranges"].size(), 2u);
  EXPECT_EQ(r0["nvtx_ranges"][0]["name"], "train_step");
  EXPECT_EQ(r0["nvtx_ranges"][0]["total_ns"], 460'000'000);
  EXPECT_DOUBLE_EQ(r0["nvtx_ranges"][0]["percent"].get<double>(), 460.0 * 100 / 1'900);

  // The worker: a forked child of rank 0, with its role record.
  const auto& w = j["processes"][2];
  EXPECT_EQ(w["pid"], 103);
  EXPECT_EQ(w["role"], "DataLoader worker");
  EXPECT_EQ(w["rank"], 0);
  EXPECT_EQ(w["exit"]["kind"], "unknown");
  EXPECT_TRUE(w["exit"]["code"].is_null());

  const auto& r1 = j["processes"][3];
  EXPECT_EQ(r1["exit"]["kind"], "signal");
  EXPECT_EQ(r1["exit"]["code"], 9);
  EXPECT_EQ(r1["unbalanced_ranges"], 1);

  // Merged table: train_step over ranks 0 and 1 (5 calls; one open, unbalanced).
  ASSERT_EQ(j["nvtx_ranges"].size(), 3u);
  const auto& step = j["nvtx_ranges"][0];
  EXPECT_TRUE(test::HasMembers(step, {{"name", "train_step"}, {"domain", ""}, {"style", "push/pop"}, {"calls", 5},
                                      {"total_ns", 610'000'000}, {"min_ns", 100'000'000}, {"max_ns", 150'000'000}}));
  EXPECT_DOUBLE_EQ(step["median_ns"].get<double>(), 120'000'000.0);
  EXPECT_DOUBLE_EQ(step["mean_ns"].get<double>(), 122'000'000.0);
  EXPECT_NEAR(step["std_ns"].get<double>(), 19'235'384.06, 0.01);
  EXPECT_DOUBLE_EQ(step["percent"].get<double>(), 610.0 * 100 / (1'900 + 130 + 1'000));  // processes with ranges
  EXPECT_EQ(step["unbalanced"], 1);
  const auto& load = j["nvtx_ranges"][2];
  EXPECT_EQ(load["name"], "load batch, \"shuffled\"");
  EXPECT_EQ(load["style"], "start/end");
  EXPECT_EQ(load["total_ns"], 30'000'000);

  ASSERT_EQ(j["nvtx_marks"].size(), 1u);
  EXPECT_EQ(j["nvtx_marks"][0], (nlohmann::json{{"name", "checkpoint"}, {"domain", ""}, {"count", 1}}));
  std::vector<std::string> warnings = j["warnings"];
  EXPECT_NE(std::find(warnings.begin(), warnings.end(), "pid 103: no exit record (killed?)"), warnings.end());
}

TEST(Report, JsonSurvivesInvalidUtf8Names) {
  TraceBuilder b(1);
  int t = b.Thread(1);
  b.Push(t, b.start_ns() + 1, std::string("bad \xff\xfe name"));
  b.Pop(t, b.start_ns() + 2);
  Report report = Analyze(TraceOf({&b}), {});
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["nvtx_ranges"][0]["name"], "bad \xEF\xBF\xBD\xEF\xBF\xBD name");
}

TEST(Report, CsvTablesWithRfc4180Quoting) {
  SmallRun run;
  Report report = Analyze(run.Load(), {true, 0});
  std::vector<CsvTable> tables = RenderCsv(report);
  std::vector<std::string> names;
  for (const CsvTable& t : tables) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"files.csv", "processes.csv", "threads.csv", "nvtx_ranges.csv",
                                             "nvtx_marks.csv", "bottleneck.csv", "steps.csv", "dataloader_workers.csv",
                                             "ranks.csv", "cuda_api.csv", "gpu_kernels.csv", "memory_ops.csv",
                                             "gpu_devices.csv", "temporal_breakdown.csv",
                                             "kernel_categories.csv", "kernel_category_steps.csv",
                                             "gpu_idle_by_kind.csv", "kernel_launches.csv",
                                             "nvtx_ranges_by_process.csv",
                                             "cuda_api_by_process.csv", "gpu_kernels_by_process.csv",
                                             "memory_ops_by_process.csv", "stats.csv"}));
  const std::string& ranges = tables[3].text;
  EXPECT_EQ(ranges,
            "name,domain,style,calls,total_ns,percent,mean_ns,std_ns,min_ns,median_ns,median_exact,max_ns,unbalanced,names\r\n"
            "train_step,,push/pop,5,610000000," + std::string(nlohmann::json(610.0 * 100 / 3'030).dump()) +
                ",122000000," + nlohmann::json(report.nvtx_ranges[0].time.std).dump() +
                ",100000000,120000000,true,150000000,1,1\r\n"
            "forward,,push/pop,4,230000000," + nlohmann::json(230.0 * 100 / 3'030).dump() +
                ",57500000," + nlohmann::json(report.nvtx_ranges[1].time.std).dump() +
                ",50000000,57500000,true,65000000,0,1\r\n"
            "\"load batch, \"\"shuffled\"\"\",,start/end,1,30000000," + nlohmann::json(30.0 * 100 / 3'030).dump() +
                ",30000000,0,30000000,30000000,true,30000000,0,1\r\n");
  const std::string& procs = tables[1].text;
  EXPECT_EQ(procs.substr(0, procs.find("\r\n")),
            "pid,ppid,parent_pid,host,rank,local_rank,world_size,role,command,executable,start_realtime_ns,start_ns,"
            "end_ns,wall_ns,exit_kind,exit_code,events,unbalanced_ranges,dropped_records,truncated,"
            "nvtx_misuse_null_names,nvtx_misuse_names_cut,nvtx_misuse_bad_attributes,nvtx_misuse_other,"
            "nvtx_misuse_undefined_names,nvtx_misuse_undefined_domains,gpu_state,gpu_cupti_result,gpu_message,"
            "gpu_records_dropped,gpu_invalid_timestamps,cuda_calls,cuda_calls_unfinished,capture_limited,recorded");
  EXPECT_NE(procs.find("\r\n100,1,,node0,,,,launcher,/usr/bin/python3 /usr/local/bin/torchrun --nproc-per-node=2 "
                       "train.py,/usr/bin/python3.11,1700000001000000000,1000000000,3000000000,2000000000,exit,0,0,0,0,"
                       "false,0,0,0,0,0,0,none,,,0,0,0,0,false,yes\r\n"),
            std::string::npos)
      << procs;
  EXPECT_EQ(tables[4].text, "name,domain,count\r\ncheckpoint,,1\r\n");
  auto by_name = [&](const std::string& name) -> const std::string& {
    for (const CsvTable& t : tables) {
      if (t.name == name) return t.text;
    }
    throw std::runtime_error("no " + name);
  };
  EXPECT_NE(by_name("nvtx_ranges_by_process.csv").find("\r\n101,node0,train_step,,push/pop,4,460000000,"),
            std::string::npos);
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField("a\nb"), "a\\nb");  // control characters escaped as in the text report
}

// MISUSE records (and names nothing defines) per process and in total: text, JSON, CSV.
TEST(Report, NvtxMisusePerProcessAndInTotal) {
  TraceBuilder a(1, 0, 1'000), b(2, 1, 2'000);
  int ta = a.Thread(1), tb = b.Thread(2);
  a.Misuse(ta, 1'100, fmt::MisuseKind::kNullName);
  a.Misuse(ta, 1'200, fmt::MisuseKind::kNullName);
  a.Misuse(ta, 1'300, fmt::MisuseKind::kNameTruncated, 5000);
  a.Misuse(ta, 1'400, fmt::MisuseKind::kBadAttributes, 12);
  a.Misuse(ta, 1'500, static_cast<fmt::MisuseKind>(9));
  b.RawFields(tb, static_cast<uint8_t>(fmt::RecordTag::kMark), {100, 0, 4321, 0});  // bogus string handle
  b.Misuse(tb, 2'500, fmt::MisuseKind::kNullName);
  TraceBuilder clean(3, 1, 3'000);
  Report r = Analyze(TraceOf({&a, &b, &clean}), {});
  EXPECT_EQ(r.damaged_files, 0u);

  std::vector<std::string> misuse;
  for (const std::string& w : r.warnings)
    if (w.find("NVTX misuse") != std::string::npos) misuse.push_back(w);
  EXPECT_EQ(misuse, (std::vector<std::string>{
                        "pid 1: NVTX misuse: 2 NULL names, 1 name cut at 4096 bytes, 1 call with bad event attributes "
                        "or string handle, 1 misuse of an unknown kind",
                        "pid 2: NVTX misuse: 1 NULL name, 1 undefined name id"}));
  EXPECT_NE(RenderText(r).find("\n  pid 2: NVTX misuse: 1 NULL name, 1 undefined name id\n"), std::string::npos);

  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["processes"][0]["nvtx_misuse"], (nlohmann::json{{"null_names", 2},
                                                               {"names_cut", 1},
                                                               {"bad_attributes", 1},
                                                               {"other", 1},
                                                               {"domains_over_limit", 0},
                                                               {"undefined_names", 0},
                                                               {"undefined_domains", 0},
                                                               {"total", 5}}));
  EXPECT_EQ(j["processes"][1]["nvtx_misuse"]["undefined_names"], 1);
  EXPECT_EQ(j["processes"][2]["nvtx_misuse"]["total"], 0);
  EXPECT_EQ(j["summary"]["nvtx_misuse"]["null_names"], 3);
  EXPECT_EQ(j["summary"]["nvtx_misuse"]["total"], 7);
  EXPECT_EQ(j["summary"]["damaged_files"], 0);

  const std::string procs = RenderCsv(r)[1].text;
  EXPECT_NE(procs.find(",false,2,1,1,1,0,0,none,,,0,0,0,0,false,yes\r\n"), std::string::npos) << procs;
  EXPECT_NE(procs.find(",false,1,0,0,0,1,0,none,,,0,0,0,0,false,yes\r\n"), std::string::npos) << procs;
}

// CSV holds valid UTF-8, with the JSON report's replacement (U+FFFD) in every field.
TEST(Report, CsvIsValidUtf8LikeTheJson) {
  TraceBuilder b(1);
  b.Command({"/usr/bin/python3", std::string("caf\xe9.py")});
  int t = b.Thread(1);
  b.ThreadName(t, 1, std::string("w\xc3"));
  b.Push(t, b.start_ns() + 1, std::string("bad \xff\xfe name, \xe2\x82"));
  b.Pop(t, b.start_ns() + 2);
  Report report = Analyze(TraceOf({&b}), {});
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  const std::string name = j["nvtx_ranges"][0]["name"];
  EXPECT_EQ(name, "bad \xEF\xBF\xBD\xEF\xBF\xBD name, \xEF\xBF\xBD");
  std::vector<CsvTable> tables = RenderCsv(report);
  EXPECT_NE(tables[3].text.find("\r\n\"" + name + "\",,push/pop,1,"), std::string::npos) << tables[3].text;
  EXPECT_EQ(j["processes"][0]["command"], "/usr/bin/python3 caf\xEF\xBF\xBD.py");
  EXPECT_NE(tables[1].text.find(",/usr/bin/python3 caf\xEF\xBF\xBD.py,"), std::string::npos) << tables[1].text;
  EXPECT_NE(tables[2].text.find(",1,w\xEF\xBF\xBD,"), std::string::npos) << tables[2].text;
  for (const CsvTable& t : tables) {
    EXPECT_EQ(ValidUtf8(t.text), t.text) << t.name;
  }
}

// Control characters in names and commands are escaped in the text report: one row per line.
TEST(Report, TextEscapesControlCharacters) {
  TraceBuilder b(1);
  b.Command({"/usr/bin/python3", "-c", "import os\nos.system('x')"});
  int t = b.Thread(1);
  b.Role(t, "my\trole");
  b.Push(t, b.start_ns() + 1, "tab\there\nnewline\x01\x1b[31m\x7f");
  b.Pop(t, b.start_ns() + 2);
  b.Mark(t, b.start_ns() + 3, "line\r\nbreak");
  Report report = Analyze(TraceOf({&b}), {true, 0});
  const std::string text = RenderText(report);
  EXPECT_NE(text.find("  tab\\there\\nnewline\\x01\\x1b[31m\\x7f\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  line\\r\\nbreak\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  my\\trole  python3 -c 'import os\\nos.system('\\''x'\\'')'"), std::string::npos) << text;
  EXPECT_NE(text.find("NVTX ranges: pid 1 (my\\trole): python3 -c 'import os\\nos.system("), std::string::npos)
      << text;
  for (char c : text) EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
  // The JSON and CSV keep names as they are.
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["nvtx_ranges"][0]["name"], "tab\there\nnewline\x01\x1b[31m\x7f");
}

// A recording that stopped early (full disk, file size limit) is named, file by file, beside the
// records it could not store; what it holds is read as usual (no damage).
TEST(Report, RecordingStoppedEarlyNamesTheFile) {
  TraceBuilder b(5, 1);
  b.Flags(fmt::kFlagRecordingFailed).Dropped(1234).HeaderEnd(fmt::EndKind::kExit, 0, b.start_ns() + 10);
  int t = b.Thread(5);
  b.Push(t, b.start_ns() + 1, "done");
  b.Pop(t, b.start_ns() + 2);
  Report report = Analyze(TraceOf({&b}), {});
  const std::vector<std::string> expected = {
      "pid 5: 1234 records dropped (not in the trace)",
      "pid 5: recording stopped early (no space or I/O error): pid-5.trace holds what was recorded until then"};
  EXPECT_EQ(report.warnings, expected);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["warnings"], expected);
  EXPECT_EQ(j["processes"][0]["dropped_records"], 1234);
  EXPECT_TRUE(j["files"][0]["errors"].empty());
  EXPECT_NE(RenderText(report).find("\n  " + expected[1] + "\n"), std::string::npos);
}

// Threads the sampler gave no timer (SAMPLE_THREAD_LOST) and CPU time while threads blocked its
// signal (SAMPLE_PAUSED): counted per process with their cause, in the stats and the warnings.
TEST(Report, ThreadsNotSampledWithTheirCause) {
  TraceBuilder a(1, 0, 1'000), b(2, 1, 2'000);
  const int sampled = a.Thread(1), share = a.Thread(11), create = a.Thread(12), settime = a.Thread(13);
  a.Sample(sampled, 1'100, 0);
  a.SampleThreadLost(share, 1'200, 1, 0, 8, 4);
  a.SampleThreadLost(create, 1'300, 2, 11, 8);
  a.SampleThreadLost(create, 1'350, 2, 11, 8);  // a second record of one thread: one thread
  a.SampleThreadLost(settime, 1'400, 3, 22, 0);
  a.SamplePaused(sampled, 1'500, 2'600'000);
  a.SamplePaused(sampled, 1'600, 900'000);
  b.SampleThreadLost(b.Thread(2), 2'100, 2, 11, 0);  // no RLIMIT_SIGPENDING: EAGAIN is kernel memory
  a.HeaderEnd(fmt::EndKind::kExit, 0, 1'700);
  b.HeaderEnd(fmt::EndKind::kExit, 0, 2'200);
  Report r = Analyze(TraceOf({&a, &b}), {});
  const std::vector<std::string> expected = {
      "pid 1: 3 of the 4 threads in its trace were not sampled (no CPU timer: 1 because the user's queued signals "
      "had reached half of RLIMIT_SIGPENDING (ulimit -i 8), the sampler's share; 1 because timer_create failed "
      "with EAGAIN (RLIMIT_SIGPENDING, ulimit -i 8, reached); 1 because timer_settime failed (errno 22)): the "
      "function table counts the others",
      "pid 1: 3 ms of CPU time not sampled: threads blocked the sampling signal meanwhile (their timers were "
      "stopped); the function table does not count it",
      "pid 2: its one thread was not sampled (no CPU timer: 1 because timer_create failed with EAGAIN (no kernel "
      "memory for another timer))"};
  EXPECT_EQ(r.warnings, expected);
  nlohmann::json j = nlohmann::json::parse(RenderJson(r));
  EXPECT_EQ(j["stats"]["threads_not_sampled"], 4);
  EXPECT_EQ(j["stats"]["samples_blocked_cpu_ms"], 3);
  EXPECT_NE(RenderText(r).find("; not in it: 4 threads never sampled, 3 ms of CPU time while threads blocked the "
                               "sampling signal (see the warnings)\n"),
            std::string::npos);
}

TEST(Report, TextGolden) {
  SmallRun run;
  Report report = Analyze(run.Load(), {});
  const std::string expected = R"(trainprof report: 4 trace files, 4 processes on 1 host, 2.00 s from 2023-11-14 22:13:21.000 UTC

Warnings
  1 unbalanced NVTX range in 1 process (pop without push, end without start, or open at the end of the trace): not in the durations
  pid 103: no exit record (killed?)

Processes
  PID      PPID  Rank  Role               Command                                                         Start    Wall  Exit                Events  Unbalanced  Truncated  Dropped
  -------  ----  ----  -----------------  -----------------------------------------------------------  --------  ------  ------------------  ------  ----------  ---------  -------
  100         1     -  launcher           python3 /usr/local/bin/torchrun --nproc-per-node=2 train.py     +0 ns  2.00 s  exit 0                   0           0  no               0
    101     100     0  rank 0             python3 -u train.py --epochs 1                               +10.0 ms  1.90 s  exit 0                  22           0  no               0
      103   101     0  DataLoader worker  python3 -u train.py --epochs 1                                +100 ms  130 ms  unknown                  5           0  no               0
    102     100     1  rank 1             python3 -u train.py --epochs 1                               +20.0 ms  1.00 s  signal 9 (SIGKILL)       4           1  no               0
  Exit "unknown": no exit record (killed?)

Bottleneck
  No training phases recorded: the Python processes of this run recorded no DataLoader wait, forward, backward or optimizer step, which trainprof's Python shim records once the program imports torch: the program did not import torch or ran no training loop (or it was run with --trace=-python, which turns the shim off). Other loops can record the same phases as NVTX push/pop ranges in domain "trainprof" with the categories of docs/trace-format.md ("Training phases"); meanwhile the NVTX range statistics and CPU samples (--sample) show where the time goes.

NVTX ranges (all processes)
  Time (%)  Total Time  Calls     Mean   Median      Min      Max   StdDev  Unbalanced  Style      Range
  --------  ----------  -----  -------  -------  -------  -------  -------  ----------  ---------  ----------------------
      20.1      610 ms      5   122 ms   120 ms   100 ms   150 ms  19.2 ms           1  push/pop   train_step
       7.6      230 ms      4  57.5 ms  57.5 ms  50.0 ms  65.0 ms  6.45 ms           0  push/pop   forward
       1.0     30.0 ms      1  30.0 ms  30.0 ms  30.0 ms  30.0 ms     0 ns           0  start/end  load batch, "shuffled"
  Time (%) = total time / summed wall time of the 3 processes with ranges (3.03 s), one
  denominator for every row; nested or concurrent ranges can add up to more than 100%.

NVTX marks (all processes)
  Count  Mark
  -----  ----------
      1  checkpoint
)";
  EXPECT_EQ(RenderText(report), expected);
}

TEST(Report, TextByProcessAndTop) {
  SmallRun run;
  Report report = Analyze(run.Load(), {true, 1});
  std::string text = RenderText(report);
  EXPECT_NE(text.find("NVTX ranges: pid 101 (rank 0): python3 -u train.py --epochs 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ... 2 more rows (--top 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  ... 1 more row (--top 1)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("NVTX ranges: pid 100 (launcher): python3 /usr/local/bin/torchrun --nproc-per-node=2 train.py\n"
                      "  none recorded\n"),
            std::string::npos);
}

}  // namespace
}  // namespace trainprof::collector
