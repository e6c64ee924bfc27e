// The progress bar of export and report (launcher/progress_bar.h): drawn only after its delay,
// redrawn when the percentage changes, erased at the end; nothing without a total; the report's
// "reading ... files" and its note. Clock and output are fakes.
#include "progress_bar.h"

#include <gtest/gtest.h>

#include <string>

namespace trainprof::launcher {
namespace {

struct Fake {
  uint64_t now = 0;
  std::string out;
  ProgressBar Bar(uint64_t total) {
    return ProgressBar(total, [this](std::string_view s) { out += s; }, [this] { return now; }, 100);
  }
};

TEST(ProgressBar, Line) {
  EXPECT_EQ(ProgressBar::Line(0, 200), "trainprof: exporting   0% [....................]  0 of 200 events");
  EXPECT_EQ(ProgressBar::Line(84, 200), "trainprof: exporting  42% [########............]  84 of 200 events");
  EXPECT_EQ(ProgressBar::Line(999, 200), "trainprof: exporting 100% [####################]  200 of 200 events");
}

TEST(ProgressBar, DrawnAfterTheDelayOncePerPercentAndErased) {
  Fake f;
  ProgressBar bar = f.Bar(1000);
  f.now = 99;
  bar.Update(100);
  EXPECT_EQ(f.out, "");  // before the delay: a short export prints nothing
  f.now = 100;
  bar.Update(100);
  EXPECT_EQ(f.out, "\rtrainprof: exporting  10% [##..................]  100 of 1000 events\033[K");
  f.out.clear();
  bar.Update(105);  // still 10%
  EXPECT_EQ(f.out, "");
  bar.Update(110);
  EXPECT_EQ(f.out, "\rtrainprof: exporting  11% [##..................]  110 of 1000 events\033[K");
  f.out.clear();
  bar.Finish();
  EXPECT_EQ(f.out, "\r\033[K");
  f.out.clear();
  bar.Finish();
  EXPECT_EQ(f.out, "");
}

TEST(ProgressBar, NothingWithoutATotalOrBeforeItShows) {
  Fake f;
  ProgressBar none = f.Bar(0);
  f.now = 1000;
  none.Update(5);
  none.Finish();
  EXPECT_EQ(f.out, "");
  ProgressBar quick = f.Bar(10);  // started at 1000
  quick.Update(10);
  quick.Finish();
  EXPECT_EQ(f.out, "");
}

TEST(ProgressBar, TheReportsReadingBarAndItsNote) {
  EXPECT_EQ(ProgressBar::Line(430, 1024, "reading", "files"),
            "trainprof: reading    41% [########............]  430 of 1024 files");
  Fake f;
  ProgressBar bar(1024, [&f](std::string_view s) { f.out += s; }, [&f] { return f.now; }, 100, "reading", "files");
  f.now = 100;
  bar.Update(1024);
  EXPECT_TRUE(bar.drawn());
  bar.Finish();
  f.out.clear();
  bar.Note("analysing 1024 processes");
  EXPECT_EQ(f.out, "\rtrainprof: analysing 1024 processes\033[K");
  f.out.clear();
  bar.Finish();
  EXPECT_EQ(f.out, "\r\033[K");
  ProgressBar late(0, [&f](std::string_view s) { f.out += s; }, [&f] { return f.now; }, 100, "reading", "files");
  f.out.clear();
  late.NoteOnceLate("analysing 3 processes");  // made at 100: not yet
  EXPECT_EQ(f.out, "");
  f.now = 200;
  late.NoteOnceLate("analysing 3 processes");
  late.NoteOnceLate("analysing 3 processes");  // once
  EXPECT_EQ(f.out, "\rtrainprof: analysing 3 processes\033[K");
  ProgressBar silent(10, nullptr, nullptr);  // not a terminal: nothing, a note neither
  silent.Note("analysing");
  EXPECT_FALSE(silent.drawn());
}

}  // namespace
}  // namespace trainprof::launcher
