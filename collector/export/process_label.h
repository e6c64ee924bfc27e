// The name an export gives a traced process: "rank 1: python train.py --lr 0.1" (its role, then
// its command line, cut after 120 characters).
#pragma once

#include <string>

#include "collector/model/model.h"

namespace trainprof::collector {

std::string ProcessLabel(const Process& p);

/// The command line alone ("/usr/bin/python3 train.py --lr 0.1", cut after 120 characters), or the
/// executable when no argv was recorded.
std::string ProcessCommand(const Process& p);

}  // namespace trainprof::collector
