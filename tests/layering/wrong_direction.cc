// A statistics-stage file including an analysis-stage header: against the pipeline's direction
// (collector/README.md), so it must not compile. Built only by the test layering.wrong_direction_include_fails.
#include "collector/stats/nvtx_stats.h"
#include "collector/analysis/bottleneck.h"
