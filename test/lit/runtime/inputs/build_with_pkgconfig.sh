#!/bin/sh
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds docs/examples/embed.c the way a C user would: with pkg-config
# against an installed kiln.   build_with_pkgconfig.sh PREFIX SOURCE OUTPUT
set -eu
prefix=$1 source=$2 output=$3
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs kiln)
cc -std=c11 -Wall -Wextra -Werror "$source" $flags -Wl,-rpath,"$prefix/lib" -o "$output"
