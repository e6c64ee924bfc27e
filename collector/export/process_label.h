// The name an export gives a traced process: "rank 1: python train.py --lr 0.1" (its role, then
// its command line, cut after 120 characters).
#pragma once

#include <string>

#include "collector/model/model.h"

namespace trainprof::collector {

std::string ProcessLabel(const Process& p);

}  // namespace trainprof::collector
