// A statistics-stage file including its own stage and the stages before it: must compile.
// Built only by the test layering.right_direction_include_compiles.
#include "collector/base/sample_stats.h"
#include "collector/model/model.h"
#include "collector/stats/nvtx_stats.h"
