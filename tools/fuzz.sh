#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Runs one libFuzzer harness of test/fuzz for a number of seconds:
#
#   tools/fuzz.sh artifact|sealed-artifact|shapes|npy|calibration|onnx SECONDS
#
# Builds the harness first when needed (clang 22, ASan and UBSan; a few
# minutes): in build-asan/ with the runtime and the input readers alone, or,
# for onnx, in build-asan-compiler/ with the importer and the kiln dialect.
# Then replays the harness's regression corpus (test/fuzz/regressions/
# TARGET), seeds a corpus from the test inputs (test/fuzz/seeds.py; the
# artifact seeds want a built kiln in build/) and fuzzes. A finding is
# written to BUILD/findings/TARGET/ and fails the run: fix it, and add the
# file to the regression corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: tools/fuzz.sh artifact|sealed-artifact|shapes|npy|calibration|onnx SECONDS"
target=${1:?$usage}
seconds=${2:?$usage}
case $target in
  artifact | sealed-artifact | shapes | npy | calibration) tree=asan ;;
  onnx) tree=asan-compiler ;;
  *) echo "$usage" >&2; exit 2 ;;
esac

tools/sanitized-build.sh "$tree" "fuzz-$target"
# The shapes harness runs the symbolic artifact the tests in build/ make.
export KILN_TEST_SYMBOLIC_ARTIFACT=${KILN_TEST_SYMBOLIC_ARTIFACT:-$PWD/build/test/unit/symbolic.kiln}
build=build-$tree
binary=$build/bin/fuzz-$target

regressions=test/fuzz/regressions/$target
if compgen -G "$regressions/*" > /dev/null; then
  "$binary" "$regressions"/* > "$build/logs/$target-regressions.log" 2>&1 ||
    { cat "$build/logs/$target-regressions.log"; exit 1; }
  echo "fuzz-$target: $(ls "$regressions" | wc -l) regression inputs replayed"
fi

seeds=$build/seeds/$target corpus=$build/corpus/$target findings=$build/findings/$target
rm -rf "$seeds" && mkdir -p "$seeds" "$corpus" "$findings"
python3 test/fuzz/seeds.py "$target" "$seeds"
log=$build/logs/$target.log
if ! "$binary" -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$findings/" \
    "$corpus" "$seeds" > "$log" 2>&1; then
  tail -40 "$log"
  echo "fuzz-$target: a finding, in $findings/" >&2
  exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
elapsed=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
echo "fuzz-$target: $runs runs in ${elapsed}s ($((runs / (elapsed > 0 ? elapsed : 1))) per second)," \
  "$(ls "$corpus" | wc -l) inputs in the corpus, no findings"
