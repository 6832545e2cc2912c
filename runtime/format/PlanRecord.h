// A plan's record: what its code was compiled for (the target, every input
// and output, the arena, the weights, the kernels), as text, one fact a
// line. The compiler embeds it in the host code (format.h names the
// symbol); the loader writes the same text from the manifest and refuses
// the artifact when the two differ, so an edited manifest cannot make the
// runtime hand the code buffers of other sizes than it writes.

#ifndef KILN_RUNTIME_FORMAT_PLANRECORD_H
#define KILN_RUNTIME_FORMAT_PLANRECORD_H

#include "runtime/format/artifact_generated.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::format {

struct RecordTensor {
  std::string_view name;
  artifact::DType dtype;
  std::vector<int64_t> shape;
  uint64_t bytes;
};

struct PlanFacts {
  std::string_view target;
  std::vector<RecordTensor> inputs, outputs;
  uint64_t arenaBytes = 0, weightsBytes = 0, kernels = 0;
};

/// The record of `facts`:
///
///   kiln plan record 1
///   target x86-64-v3
///   input 0 "x": F32 1x3x224x224, 602112 bytes
///   output 0 "y": F32 1x1000, 4000 bytes
///   arena 1204224 bytes
///   weights 102228672 bytes
///   kernels 53
std::string planRecord(const PlanFacts &facts);

/// Where two records first differ, as "the manifest says `A`; the code was
/// compiled for `B`"; empty when they are the same.
std::string recordMismatch(std::string_view manifest, std::string_view code);

} // namespace kiln::format

#endif // KILN_RUNTIME_FORMAT_PLANRECORD_H
