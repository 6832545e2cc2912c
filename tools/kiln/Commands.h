//===- Commands.h - kiln's subcommands besides compile ----------*- C++ -*-===//

#ifndef KILN_TOOLS_KILN_COMMANDS_H
#define KILN_TOOLS_KILN_COMMANDS_H

#include "llvm/Support/CommandLine.h"

namespace kiln {

/// kiln run model.kiln --input name=file.npy ... --output-dir out/
extern llvm::cl::SubCommand runCommand;
int runModel();

} // namespace kiln

#endif // KILN_TOOLS_KILN_COMMANDS_H
