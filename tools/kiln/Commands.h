//===- Commands.h - kiln's subcommands besides compile ----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace kiln {

/// kiln run model.kiln --input name=file.npy ... --output-dir out/
extern llvm::cl::SubCommand runCommand;
int runModel();

/// kiln inspect model.kiln
extern llvm::cl::SubCommand inspectCommand;
int inspectModel();

/// kiln bench model.kiln --warmup N --iterations N
extern llvm::cl::SubCommand benchCommand;
int benchModel();

} // namespace kiln

#endif // KILN_TOOLS_KILN_COMMANDS_H
