# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""onnxruntime's CPU provider, the peer the host benchmarks time kiln against."""
import statistics
import time

import onnxruntime as ort


def onnxruntime_session(path, threads):
    """A CPU session with `threads` intra-op threads and no inter-op ones."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def onnxruntime_median(session, feed, warmup, iterations):
    """The median milliseconds of `iterations` runs after `warmup` runs."""
    for _ in range(warmup):
        session.run(None, feed)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feed)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)
