// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- kiln-opt.cpp - mlir-opt with the kiln dialect and passes -----------===//
//
// Serves the lit tests: every upstream dialect and pass is registered beside
// kiln's, so a test can run one kiln pass or compose it with upstream ones.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Pipeline.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  kiln::registerCompilerPasses();
  mlir::DialectRegistry registry;
  kiln::registerCompilerDialects(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "kiln optimizer driver\n", registry));
}
