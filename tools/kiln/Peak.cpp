// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//===- Peak.cpp - what one core can compute at most -----------------------===//

#include "Peak.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kiln {

namespace {

#if defined(__x86_64__)
/// Twelve chains of FMAs keep both FMA units busy through their latency.
constexpr int kChains = 12;
constexpr long kSteps = 1 << 19;

/// kSteps rounds of kChains FMAs on 512-bit vectors (a millisecond or so);
/// their sum, so that none is optimized away.
__attribute__((target("avx512f"))) float fma512() {
  __m512 chains[kChains];
  for (int i = 0; i < kChains; ++i)
    chains[i] = _mm512_set1_ps(float(i));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-6f);
  for (long step = 0; step < kSteps; ++step)
    for (int i = 0; i < kChains; ++i)
      chains[i] = _mm512_fmadd_ps(chains[i], scale, shift);
  float lanes[16];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm512_storeu_ps(lanes, chains[i]);
    for (float lane : lanes)
      sum += lane;
  }
  return sum;
}

/// The same on 256-bit vectors.
__attribute__((target("avx2,fma"))) float fma256() {
  __m256 chains[kChains];
  for (int i = 0; i < kChains; ++i)
    chains[i] = _mm256_set1_ps(float(i));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-6f);
  for (long step = 0; step < kSteps; ++step)
    for (int i = 0; i < kChains; ++i)
      chains[i] = _mm256_fmadd_ps(chains[i], scale, shift);
  float lanes[8];
  float sum = 0;
  for (int i = 0; i < kChains; ++i) {
    _mm256_storeu_ps(lanes, chains[i]);
    for (float lane : lanes)
      sum += lane;
  }
  return sum;
}
#endif

} // namespace

double hostPeakGflops(llvm::StringRef level) {
#if defined(__x86_64__)
  int lanes = level == "x86-64-v4" ? 16 : level == "x86-64-v3" ? 8 : 0;
  if (lanes == 0)
    return 0;
  double best = 0;
  volatile float sink = 0;
  for (int round = 0; round < 5; ++round) {
    auto start = std::chrono::steady_clock::now();
    sink = sink + (lanes == 16 ? fma512() : fma256());
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    double flops = 2.0 * lanes * kChains * double(kSteps);
    best = std::max(best, flops / seconds.count() / 1e9);
  }
  return best;
#else
  (void)level;
  return 0;
#endif
}

} // namespace kiln
