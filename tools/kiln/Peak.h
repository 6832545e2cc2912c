// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Peak.h - what one core can compute at most -------------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_PEAK_H
#define KILN_TOOLS_KILN_PEAK_H

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The floating-point operations a second that one core of this machine
/// does at most with the vectors of host level `level` (x86-64-v4: 512-bit
/// FMAs, x86-64-v3: 256-bit), in GFLOP/s: independent FMAs on the calling
/// thread, the best of five runs of a millisecond or so, so that the
/// clock the core reaches under load is counted. 0 for other targets.
double hostPeakGflops(llvm::StringRef level);

} // namespace kiln

#endif // KILN_TOOLS_KILN_PEAK_H
