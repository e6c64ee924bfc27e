// The catalogue of losses (collector/model/losses.def): its texts, the warnings and `stats` made
// from it, the reader's counts by kind, and docs/report-schema.md's table of it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "collector/model/losses.h"
#include "collector/render/render.h"
#include "collector/report/report.h"
#include "collector/report/warnings.h"
#include "test_util.h"

#ifndef TRAINPROF_SOURCE_DIR
#error "TRAINPROF_SOURCE_DIR: the source tree, for docs/report-schema.md"
#endif

namespace trainprof::collector {
namespace {

using test::TraceBuilder;
using test::TraceOf;
namespace fmt = trainprof::format;

TEST(LossCatalogue, KeysAreUniqueAndTextsComplete) {
  std::set<std::string_view> keys;
  const std::regex key("[a-z][a-z0-9_]*");
  for (size_t k = 0; k < kLossKinds; ++k) {
    const LossInfo& e = kLossCatalogue[k];
    EXPECT_TRUE(keys.insert(e.key).second) << e.key;
    EXPECT_TRUE(std::regex_match(std::string(e.key), key)) << e.key;
    EXPECT_FALSE(e.description.empty()) << e.key;
    // Every placeholder is known: none is left in the text, for one and for many.
    for (uint64_t n : {1, 2}) {
      const std::string text = LossText(static_cast<Loss>(k), n, "D");
      EXPECT_EQ(text.find('{'), std::string::npos) << e.key << ": " << text;
      EXPECT_EQ(text.find('|'), std::string::npos) << e.key << ": " << text;
    }
  }
  // A group's entries are consecutive, of one scope: their parts share one line.
  for (size_t k = 1; k + 1 < kLossKinds; ++k) {
    const LossInfo &prev = kLossCatalogue[k - 1], &e = kLossCatalogue[k];
    if (e.group.empty() || e.group == prev.group) continue;
    for (size_t j = k + 1; j < kLossKinds; ++j) {
      if (kLossCatalogue[j].group != e.group) continue;
      EXPECT_EQ(kLossCatalogue[j - 1].group, e.group) << kLossCatalogue[j].key << " is apart from its group";
      EXPECT_EQ(kLossCatalogue[j].scope, e.scope) << kLossCatalogue[j].key;
    }
  }
}

TEST(LossCatalogue, TextFillsCountFormAndLimits) {
  EXPECT_EQ(LossText(Loss::records_dropped, 1), "1 record dropped (not in the trace)");
  EXPECT_EQ(LossText(Loss::records_dropped, 0), "0 records dropped (not in the trace)");
  EXPECT_EQ(LossText(Loss::nvtx_names_cut, 3), "3 names cut at 4096 bytes");
  EXPECT_EQ(LossText(Loss::nvtx_domains_over_limit, 1),
            "1 NVTX domain over the limit of 4095 (its ranges merged with the others over it)");
  EXPECT_EQ(LossText(Loss::nvtx_domains_over_limit, 2),
            "2 NVTX domains over the limit of 4095 (their ranges merged into one domain)");
  EXPECT_EQ(LossText(Loss::cuda_unfinished_calls, 2, "cudaFree, cudaMalloc"),
            "2 CUDA calls never returned (cudaFree, cudaMalloc): the process ended inside; not in the durations");
  EXPECT_EQ(LossText(Loss::truncated_files, 1), "");  // no line of its own
}

// Lines by scope, then subject, then catalogue order, whatever order they were found in; a group's
// parts on one line; counts without a line still summed.
TEST(LossLog, OrdersGroupsAndSums) {
  LossLog log;
  log.Add(Loss::nvtx_undefined_names, 1, 1, "pid 2");
  log.Add(Loss::records_dropped, 4, 0, "pid 1");
  log.Add(Loss::nvtx_null_names, 2, 1, "pid 2");
  log.Add(Loss::unbalanced_ranges, 3, 0, "", "2 processes");
  log.Add(Loss::damaged_files, 1, 1, "b.trace", "bad");
  log.Add(Loss::damaged_files, 1, 0, "a.trace", "worse");
  log.Add(Loss::nvtx_null_names, 1, 0, "pid 1");
  log.Add(Loss::gpu_records_dropped, 0, 0, "pid 1");  // nothing
  log.Count(Loss::truncated_files, 2);
  EXPECT_EQ(log.Warnings(), (std::vector<std::string>{
                                "a.trace: worse",
                                "b.trace: bad",
                                "3 unbalanced NVTX ranges in 2 processes (pop without push, end without start, or open "
                                "at the end of the trace): not in the durations",
                                "pid 1: 4 records dropped (not in the trace)",
                                "pid 1: NVTX misuse: 1 NULL name",
                                "pid 2: NVTX misuse: 2 NULL names, 1 undefined name id",
                            }));
  EXPECT_EQ(log.totals()[Loss::nvtx_null_names], 3u);
  EXPECT_EQ(log.totals()[Loss::damaged_files], 2u);
  EXPECT_EQ(log.totals()[Loss::truncated_files], 2u);
  EXPECT_EQ(log.totals()[Loss::gpu_records_dropped], 0u);
}

// The reader counts every problem by kind, also past the errors it lists (kMaxErrorsPerFile).
TEST(LossCounts, ReaderCountsProblemsByKindPastTheListedOnes) {
  TraceBuilder b(5, 1, 0);
  b.Layout(1024, 256);
  int t = b.Thread(5);
  for (int i = 0; i < 40; ++i) {
    b.Mark(t, 10 + i, "a");
    b.NewChunk(t);
  }
  b.Mark(t, 100, "a");
  b.Raw(t, {200, 1, 2, 3});
  std::vector<uint8_t> bytes = b.Build();
  for (int k = 0; k < 40; ++k) bytes[1024 + 256 * k] ^= 0x40;  // 40 bad chunk magics
  StringPool pool;
  ReadResult r = ReadTraceBytes(bytes, "t.trace", &pool);
  ASSERT_TRUE(r.image);
  EXPECT_EQ(r.status.losses[Loss::chunk_errors], 40u);
  EXPECT_EQ(r.status.losses[Loss::bad_record_tags], 1u);
  EXPECT_EQ(r.status.losses[Loss::malformed_records], 0u);
  // 32 listed, then "and N more problems" (with the undefined id of the mark after the lost definition).
  const uint64_t problems = r.status.losses[Loss::chunk_errors] + r.status.losses[Loss::bad_record_tags] +
                            r.status.losses[Loss::undefined_ids];
  EXPECT_EQ(r.status.errors.size(), 33u);
  EXPECT_EQ(r.status.errors.back(), "and " + std::to_string(problems - 32) + " more problems");

  Report report = Analyze(LoadTraceBytes({{"t.trace", bytes}}), {});
  EXPECT_EQ(report.stats[Loss::chunk_errors], 40u);
  EXPECT_EQ(report.stats[Loss::damaged_files], 1u);
  nlohmann::json j = nlohmann::json::parse(RenderJson(report));
  EXPECT_EQ(j["stats"]["chunk_errors"], 40);
  EXPECT_EQ(j["stats"]["bad_record_tags"], 1);
  EXPECT_EQ(j["stats"].size(), kLossKinds);  // every key, zeros too
}

TEST(LossCounts, HeaderAndOpenFailures) {
  StringPool pool;
  EXPECT_EQ(ReadTraceBytes({}, "e.trace", &pool).status.losses[Loss::header_errors], 1u);
  test::ScratchDir dir;
  ReadResult missing = ReadTraceFile(dir / "none.trace", &pool);
  EXPECT_EQ(missing.status.losses[Loss::read_errors], 1u);
  EXPECT_EQ(missing.status.losses[Loss::header_errors], 0u);
}

// The report's stats: per-process counts summed, the flags counted once a process, and the same
// numbers in JSON and CSV.
TEST(LossCounts, ReportSumsProcessesAndRendersEveryKey) {
  TraceBuilder a(1, 0, 1'000), b(2, 1, 2'000);
  int ta = a.Thread(1), tb = b.Thread(2);
  a.Misuse(ta, 1'100, fmt::MisuseKind::kNullName);
  a.Pop(ta, 1'200);  // pop without push
  a.HeaderEnd(fmt::EndKind::kExit, 0, 5'000);
  b.Misuse(tb, 2'100, fmt::MisuseKind::kNullName);
  b.Misuse(tb, 2'200, fmt::MisuseKind::kTooManyDomains);
  b.Pop(tb, 2'300);
  b.Pop(tb, 2'400);
  b.Dropped(7);  // no exit record either
  Report r = Analyze(TraceOf({&a, &b}), {});
  EXPECT_EQ(r.stats[Loss::nvtx_null_names], 2u);
  EXPECT_EQ(r.stats[Loss::nvtx_domains_over_limit], 1u);
  EXPECT_EQ(r.stats[Loss::unbalanced_ranges], 3u);
  EXPECT_EQ(r.stats[Loss::records_dropped], 7u);
  EXPECT_EQ(r.stats[Loss::no_exit_record], 1u);
  EXPECT_EQ(r.stats[Loss::damaged_files], 0u);
  EXPECT_TRUE(test::Has(r.warnings, "3 unbalanced NVTX ranges in 2 processes")) << test::Join(r.warnings);
  EXPECT_TRUE(test::Has(r.warnings, "pid 2: 7 records dropped (not in the trace)")) << test::Join(r.warnings);

  nlohmann::ordered_json j = nlohmann::ordered_json::parse(RenderJson(r));
  ASSERT_TRUE(j.contains("stats"));
  size_t k = 0;
  for (const auto& [key, value] : j["stats"].items()) {
    ASSERT_LT(k, kLossKinds);
    EXPECT_EQ(key, kLossCatalogue[k].key);  // catalogue order
    EXPECT_EQ(value, r.stats[static_cast<Loss>(k)]) << key;
    ++k;
  }
  EXPECT_EQ(k, kLossKinds);

  std::string csv;
  for (const CsvTable& t : RenderCsv(r))
    if (t.name == "stats.csv") csv = t.text;
  EXPECT_EQ(csv.rfind("key,severity,scope,value\r\n", 0), 0u) << csv;
  EXPECT_NE(csv.find("\r\nunbalanced_ranges,data_loss,processes,3\r\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\r\ndamaged_files,damage,file,0\r\n"), std::string::npos) << csv;
}

// docs/report-schema.md's table of the `stats` keys is the catalogue's (LossCatalogueMarkdown).
// TRAINPROF_UPDATE_DOCS=1 rewrites it: `TRAINPROF_UPDATE_DOCS=1 ctest -R LossCatalogue.SchemaDoc`.
TEST(LossCatalogue, SchemaDocTableIsTheCatalogue) {
  const std::string path = std::string(TRAINPROF_SOURCE_DIR) + "/docs/report-schema.md";
  std::string doc = test::ReadFile(path);
  const std::string begin = "<!-- stats table: generated from collector/model/losses.def -->\n";
  const std::string end = "<!-- end of stats table -->\n";
  const size_t b = doc.find(begin), e = doc.find(end);
  ASSERT_NE(b, std::string::npos) << path << " has no line " << begin;
  ASSERT_NE(e, std::string::npos) << path << " has no line " << end;
  ASSERT_LT(b, e);
  const std::string want = LossCatalogueMarkdown();
  const std::string have = doc.substr(b + begin.size(), e - b - begin.size());
  if (have != want && std::getenv("TRAINPROF_UPDATE_DOCS") != nullptr) {
    doc.replace(b + begin.size(), have.size(), want);
    std::ofstream(path, std::ios::binary) << doc;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(have, want) << path << " differs from collector/model/losses.def; rewrite it with "
                        << "TRAINPROF_UPDATE_DOCS=1 ctest -R LossCatalogue.SchemaDoc";
}

}  // namespace
}  // namespace trainprof::collector
