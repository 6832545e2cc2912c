// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Catch2 runner for kiln's unit tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
