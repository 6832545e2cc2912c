// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plan's record: what its code was compiled for (the target, every input
// and output, the arena, the weights, the kernels, and a GPU plan's
// launches with every argument), as text, one fact a line. The compiler
// embeds it in the code (the host code's exported symbol, a global of the
// PTX and cubins; format.h names it); the runtime writes the same text from
// the manifest and refuses the artifact when the two differ, so an edited
// manifest cannot make the runtime hand the code buffers of other sizes
// than it writes, or launch a kernel on other memory or another grid than
// it was compiled for.

#ifndef KILN_RUNTIME_FORMAT_PLANRECORD_H
#define KILN_RUNTIME_FORMAT_PLANRECORD_H

#include "runtime/format/artifact_generated.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::format {

/// A tensor: its shape (-1 at a symbolic dimension), the text of each
/// symbolic dimension (dimText; empty for a static one, or none at all for
/// a static tensor), and its bytes (at the symbols' largest values).
struct RecordTensor {
  std::string_view name;
  artifact::DType dtype;
  std::vector<int64_t> shape;
  std::vector<std::string> dims;
  uint64_t bytes;
};

/// A symbol, a size the model takes at run time, and its range.
struct RecordSymbol {
  std::string_view name;
  int64_t min = 0, max = 0;
};

/// A GPU kernel's argument: a view of a buffer (`base` input, output,
/// arena or weights, with the manifest's descriptor, and a TMA tensor map
/// when `mapDims` is not empty), or a scalar (`base` empty).
struct RecordArg {
  std::string_view base;
  uint64_t index = 0, byteOffset = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  std::vector<uint64_t> mapDims, mapStrides;
  std::vector<uint32_t> mapBox;
  uint32_t swizzle = 0;
  uint32_t width = 0;
  uint64_t bits = 0;
  /// Where a run gives a field: every field's program, a buffer's byte
  /// offset, offset, sizes and strides, or a scalar's value; else none.
  std::vector<std::vector<int64_t>> programs;
};

struct RecordLaunch {
  std::string_view kernel;
  uint32_t grid[3] = {}, block[3] = {};
  uint32_t sharedBytes = 0;
  std::vector<RecordArg> args;
  /// Where a run gives the grid: a program per dimension; else none.
  std::vector<std::vector<int64_t>> gridPrograms;
};

struct PlanFacts {
  std::string_view target;
  std::vector<RecordSymbol> symbols;
  std::vector<RecordTensor> inputs, outputs;
  uint64_t arenaBytes = 0, weightsBytes = 0, kernels = 0;
  /// A GPU plan's launches, in order; none for the host.
  std::vector<RecordLaunch> launches;
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
///
/// with a line before the inputs for each symbol, and each symbolic
/// dimension in parentheses,
///
///   symbol 0 "batch": 1 to 8
///   input 0 "x": F32 ("batch")x3x224x224, 4816896 bytes
///
/// and for each of a GPU plan's launches
///
///   launch 0 "main_kernel": grid 8x1x1, block 128x1x1, shared 0 bytes
///   arg 0: input 0 at byte 0, offset 0, sizes 1x64, strides 64x1
///   arg 1: scalar of 4 bytes, 1065353216
///
/// where a field a run gives is its program's text in parentheses:
///
///   launch 1 "main_kernel_0": grid ("batch" * 4 ceildiv 256)x(1)x(1), ...
///   arg 0: arena 0 at byte ("batch" * 64), offset (0), sizes ("batch")x(4), ...
///   arg 1: scalar of 8 bytes, ("batch" * 4)
std::string planRecord(const PlanFacts &facts);

/// Where two records first differ, as "the manifest says `A`; the code was
/// compiled for `B`"; empty when they are the same.
std::string recordMismatch(std::string_view manifest, std::string_view code);

} // namespace kiln::format

#endif // KILN_RUNTIME_FORMAT_PLANRECORD_H
