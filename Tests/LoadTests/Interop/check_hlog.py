#!/usr/bin/env python3
"""Interop check: a latency.hlog written by `paystorm load` must be readable by the PyPI
`hdrhistogram` package, with the same counts and percentiles as PayStorm's summary.json;
and a histogram encoded by PayStorm must equal one built in Python from the same values.

Usage: check_hlog.py RUN_DIR
"""
import json
import sys

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader


def main(run_dir):
    summary = json.load(open(f"{run_dir}/summary.json"))
    reader = HistogramLogReader(f"{run_dir}/latency.hlog", HdrHistogram(1, 3600 * 1000 * 1000, 3))
    totals = {}
    while True:
        histogram = reader.get_next_interval_histogram()
        if histogram is None:
            break
        tag = histogram.get_tag()
        if tag not in totals:
            totals[tag] = HdrHistogram(1, 3600 * 1000 * 1000, 3)
        totals[tag].add(histogram)
    if not totals:
        sys.exit("no interval histograms read from latency.hlog")
    checked = 0
    for figures in summary["latency"]:
        if figures["kind"] == "all" or figures["count"] == 0:
            continue
        tag = f'{figures["kind"]}.{"latency" if figures["measure"] == "intended" else "service"}'
        python = totals.get(tag)
        if python is None:
            sys.exit(f"tag {tag} missing from latency.hlog")
        if python.get_total_count() != figures["count"]:
            sys.exit(f"{tag}: python counts {python.get_total_count()}, paystorm {figures['count']}")
        for key, percentile in [("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9)]:
            ours = figures["micros"][key]
            theirs = python.get_value_at_percentile(percentile)
            # Python reports the highest equivalent value; PayStorm clamps to the recorded max,
            # so the two agree within one equivalent range (0.1 % at 3 digits).
            if abs(ours - theirs) > max(1, theirs * 0.001) + 1:
                sys.exit(f"{tag} {key}: python {theirs}, paystorm {ours}")
        checked += 1
        print(f"ok {tag}: {figures['count']} values, p99 python {python.get_value_at_percentile(99)} paystorm {figures['micros']['p99']}")
    if checked == 0:
        sys.exit("summary.json has no per-kind latency figures")


if __name__ == "__main__":
    main(sys.argv[1])
