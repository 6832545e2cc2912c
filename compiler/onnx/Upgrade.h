// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Upgrade.h - old opsets through ONNX's version converter --*- C++ -*-===//
//
// kiln's converters follow opsets 11 through 21. A model of an older opset
// of the default domain is first rewritten by ONNX's own version converter
// (libonnx's adapters, operator by operator), so that every operator kiln
// knows needs one form per opset it accepts, not one per opset ONNX has had.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ONNX_UPGRADE_H
#define KILN_COMPILER_ONNX_UPGRADE_H

#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>

namespace kiln {

/// Rewrites `model` to opset `target` of the default domain with ONNX's
/// version converter, after ONNX's checker has accepted it and ONNX's shape
/// inference has recorded the shapes its adapters read. Fails with the
/// checker's or the converter's reason when either refuses (a malformed
/// graph, an operator without an adapter); `model` then holds at most more
/// value_info than before.
llvm::Error upgradeOpset(onnx::ModelProto &model, int64_t target);

} // namespace kiln

#endif // KILN_COMPILER_ONNX_UPGRADE_H
