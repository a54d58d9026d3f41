"""Call latencies as fixed histograms, so a percentile can be read from histograms summed over any window.

Each call's latency falls in one of HISTOGRAM_BUCKETS buckets whose bounds are fixed and log-spaced, three to each
doubling: bucket 0 holds [0, 1 ms), bucket k (1 … 48) holds [2^((k-1)/3), 2^(k/3)) ms, and the last holds 65,536 ms
and more (past any call deadline). Summing two histograms bucket by bucket gives the histogram of both sets of calls,
so the call log's rollups (service.migrations.call_rollups) keep one per hour and per day and a summary adds them up.

A percentile read from a histogram is the representative value of the bucket its rank falls in: the bucket's
geometric midpoint, within PERCENTILE_RELATIVE_ERROR of every latency in the bucket (so of the exact percentile),
or, for bucket 0, half a millisecond (within 0.5 ms), and for the last, its lower bound 65,536 ms (a floor).
"""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Sequence

#: Buckets to a doubling of latency.
PER_DOUBLING = 3
#: The lower bounds of buckets 1 … HISTOGRAM_BUCKETS - 1, in milliseconds: 1, 2^(1/3), 2^(2/3), 2, … 65,536.
BOUNDS: tuple[float, ...] = tuple(2 ** (k / PER_DOUBLING) for k in range(16 * PER_DOUBLING + 1))
HISTOGRAM_BUCKETS = len(BOUNDS) + 1
#: The most a percentile read from a histogram is off, relative to the exact one, for latencies of 1 ms to 65,536 ms.
PERCENTILE_RELATIVE_ERROR = 2 ** (1 / (2 * PER_DOUBLING)) - 1  # ≈ 0.1225


def bucket_of(latency_ms: float) -> int:
    """The histogram bucket of one latency."""
    return bisect_right(BOUNDS, latency_ms)


def representative(bucket: int) -> float:
    """The latency a percentile falling in `bucket` is reported as."""
    if bucket == 0:
        return 0.5
    if bucket >= len(BOUNDS):
        return BOUNDS[-1]
    return math.sqrt(BOUNDS[bucket - 1] * BOUNDS[bucket])


def histogram(latencies: Sequence[float]) -> list[int]:
    """The histogram of some latencies (for tests and benchmarks; the service counts in SQL and in its writer)."""
    counts = [0] * HISTOGRAM_BUCKETS
    for latency in latencies:
        counts[bucket_of(latency)] += 1
    return counts


def percentile(counts: Sequence[int], p: float) -> float | None:
    """The `p`-th percentile (0 < p ≤ 100, nearest rank) of the latencies a histogram counts; None when it is empty."""
    total = sum(counts)
    if total == 0:
        return None
    rank = max(1, math.ceil(p / 100 * total))
    seen = 0
    for bucket, count in enumerate(counts):
        seen += count
        if seen >= rank:
            return round(representative(bucket), 1)
    raise AssertionError("unreachable: the ranks end at the total")
