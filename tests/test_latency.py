"""Latency histograms: percentiles read from summed histograms are within the stated bound of the exact ones."""
import math
import random

import pytest

from service.latency import BOUNDS, HISTOGRAM_BUCKETS, PERCENTILE_RELATIVE_ERROR, bucket_of, histogram, percentile


def exact(latencies, p):
    ordered = sorted(latencies)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


def test_buckets_are_log_spaced_three_to_a_doubling_from_1_ms_to_65536_ms():
    assert BOUNDS[0] == 1 and BOUNDS[3] == 2 and BOUNDS[-1] == 65_536 and HISTOGRAM_BUCKETS == 50
    assert [bucket_of(v) for v in (0, 0.99, 1, 1.9, 2, 65_535.9, 65_536, 10**9)] == [0, 0, 1, 3, 4, 48, 49, 49]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("p", [50, 95, 99])
def test_a_percentile_of_summed_histograms_is_within_the_bound_of_the_exact_one(seed, p):
    rng = random.Random(seed)
    parts = [[rng.lognormvariate(rng.uniform(1, 6), 1) + 1 for _ in range(rng.randrange(1, 400))] for _ in range(6)]
    summed = [sum(column) for column in zip(*(histogram(part) for part in parts))]
    everything = [v for part in parts for v in part]
    assert summed == histogram(everything)
    got, want = percentile(summed, p), exact(everything, p)
    assert abs(got - want) <= want * PERCENTILE_RELATIVE_ERROR + 0.05  # + rounding to a tenth of a millisecond


def test_under_a_millisecond_is_half_a_millisecond_and_past_the_last_bound_its_floor():
    assert percentile(histogram([0.1, 0.2, 0.3]), 50) == 0.5
    assert percentile(histogram([70_000, 90_000]), 95) == 65_536


def test_an_empty_histogram_has_no_percentile():
    assert percentile([0] * HISTOGRAM_BUCKETS, 50) is None


def test_the_rank_is_the_nearest_rank():
    counts = histogram([10] * 95 + [1000] * 5)
    assert percentile(counts, 95) < 12 and percentile(counts, 96) > 900
