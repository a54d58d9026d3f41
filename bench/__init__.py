"""Benchmarks: each figure of issue 7 measured side by side with its comparison, on 127.0.0.1.

`python -m bench` runs them all and writes bench/RESULTS.md; `python -m bench.<name>` runs one.
"""
