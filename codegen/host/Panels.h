// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Panels.h - a task's panel of B for register tiles --------*- C++ -*-===//

#ifndef KILN_CODEGEN_HOST_PANELS_H
#define KILN_CODEGEN_HOST_PANELS_H

#include "codegen/host/TileContext.h"

namespace kiln::host {

/// Copies the task's columns [column, column + tileColumns) of every row k
/// of B into `panel`, where `tile` emits.
void copyPanel(const TileContext &tile, Value panel, Value column, int64_t tileColumns);

/// Computes the task's panel of B, columns [column, column + tileColumns)
/// of every row k, with the body of the producer `tile`'s fusion joins,
/// into `panel`, where `tile` emits. Where a run gives B's columns, `left`
/// is how many are left from `column` (findProducer fuses only a window
/// read as rows there).
void packPanel(const TileContext &tile, Value panel, Value column, int64_t tileColumns, Value left);

} // namespace kiln::host

#endif // KILN_CODEGEN_HOST_PANELS_H
