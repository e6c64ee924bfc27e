// Python processes the shim could not load into (header key 8, python_shim_note.h): the field, the
// warning line, and the bottleneck's no_phases message instead of advice to use `trainprof run`.
#include "collector/analysis/python_shim_note.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "collector/render/render.h"
#include "collector/report/report.h"
#include "test_util.h"

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

constexpr uint16_t kShimOffKey = static_cast<uint16_t>(fmt::MetaKey::kPythonShimOff);

TEST(PythonShimNote, ReasonsAndAdvicePerOption) {
  EXPECT_EQ(PythonShimOffReason("-I"), "python -I ignores PYTHONPATH (isolated mode)");
  EXPECT_EQ(PythonShimOffReason("-E -S"),
            "python -E ignores PYTHONPATH and python -S skips `import site`, which imports sitecustomize");
  EXPECT_EQ(DescribePythonShimOff("-E"),
            "Python phases not recorded: python -E ignores PYTHONPATH, so trainprof's shim (its sitecustomize, put "
            "first on PYTHONPATH) could not load; run Python without -E to record them");
  EXPECT_NE(DescribePythonShimOff("-E -I").find("run Python without -E or -I to record them"), std::string::npos);
}

TEST(PythonShimNote, ReportSaysWhyAPythonProcessHasNoPhases) {
  TraceBuilder launcher(700);
  launcher.Command({"/bin/sh", "-c", "python3 -I train.py"}).HeaderEnd(fmt::EndKind::kExit, 0, launcher.start_ns() + 50'000'000);
  TraceBuilder python(701, 700);
  python.Command({"/usr/bin/python3", "-I", "train.py"}).RawMeta(kShimOffKey, "-I");
  int t = python.Thread(701);
  python.Push(t, python.start_ns() + 1'000'000, "my_range");
  python.Pop(t, python.start_ns() + 2'000'000);
  python.HeaderEnd(fmt::EndKind::kExit, 0, python.start_ns() + 40'000'000);
  Report report = Analyze(TraceOf({&launcher, &python}), {});

  ASSERT_EQ(report.processes.size(), 2u);
  EXPECT_EQ(report.processes[0].python_shim_off, "");
  EXPECT_EQ(report.processes[1].python_shim_off, "-I");
  const std::string note = "pid 701: Python phases not recorded: python -I ignores PYTHONPATH (isolated mode), so "
                           "trainprof's shim (its sitecustomize, put first on PYTHONPATH) could not load; run Python "
                           "without -I to record them";
  EXPECT_NE(std::find(report.warnings.begin(), report.warnings.end(), note), report.warnings.end());

  EXPECT_EQ(report.bottleneck.status, "no_phases");
  const std::string& m = report.bottleneck.message;
  EXPECT_EQ(m.find("run the script as"), std::string::npos) << m;
  EXPECT_NE(m.find("could not load in the Python process (pid 701: python -I ignores PYTHONPATH (isolated mode))"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Run Python without -I to record them"), std::string::npos) << m;

  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_TRUE(j["processes"][0]["python_shim_off"].is_null());
  EXPECT_EQ(j["processes"][1]["python_shim_off"], "-I");
  EXPECT_EQ(j["bottleneck"]["message"], m);
  const std::string text = RenderText(report);
  EXPECT_NE(text.find(note), std::string::npos) << text;
  EXPECT_NE(text.find("Run Python without -I"), std::string::npos) << text;
}

TEST(PythonShimNote, ManyProcessesAreCountedAndListedUpToFour) {
  std::vector<TraceBuilder> procs;
  for (int i = 0; i < 6; ++i) {
    procs.emplace_back(800 + i, i == 0 ? 1 : 800);
    procs.back().RawMeta(kShimOffKey, i % 2 == 0 ? "-E" : "-S");
  }
  std::vector<const TraceBuilder*> ptrs;
  for (const TraceBuilder& b : procs) ptrs.push_back(&b);
  Report report = Analyze(TraceOf(ptrs), {});
  const std::string& m = report.bottleneck.message;
  EXPECT_NE(m.find("could not load in 6 Python processes (pid 800: python -E ignores PYTHONPATH; pid 801: "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("; and 2 more)"), std::string::npos) << m;
  EXPECT_NE(m.find("Run Python without -E or -S"), std::string::npos) << m;
}

TEST(PythonShimNote, WithoutTheNoteTheGeneralAdviceStays) {
  // A process without the note and without phases: the general advice, no field (a Python one:
  // it recorded no training loop; another program: how to record the phases).
  TraceBuilder py(900);
  Report report = Analyze(TraceOf({&py}), {});
  EXPECT_EQ(report.processes[0].python_shim_off, "");
  EXPECT_NE(report.bottleneck.message.find("the program did not import torch or ran no training loop"),
            std::string::npos);
  TraceBuilder native(901);
  native.Command({"./train"}).Executable("/opt/app/train");
  report = Analyze(TraceOf({&native}), {});
  EXPECT_EQ(report.processes[0].python_shim_off, "");
  EXPECT_NE(report.bottleneck.message.find("run the script as"), std::string::npos);
}

}  // namespace
}  // namespace trainprof::collector
