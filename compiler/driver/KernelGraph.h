// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- KernelGraph.h - a plan's kernels as a Graphviz graph -----*- C++ -*-===//

#ifndef KILN_COMPILER_DRIVER_KERNELGRAPH_H
#define KILN_COMPILER_DRIVER_KERNELGRAPH_H

#include "mlir/IR/BuiltinOps.h"

namespace kiln {

/// The plan's kernels (kiln-list-kernels' list on `module`) as a Graphviz
/// graph: one box per kernel, coloured by the format its product reads,
/// with an edge from each kernel (or model input) to the kernels that read
/// its result.
void printKernelGraph(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_KERNELGRAPH_H
