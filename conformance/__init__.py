"""Toolgate's conformance kit: checks a platform or a tool endpoint over HTTP, as an outsider.

It imports nothing from `service`. Cases are declared once (`case.py`), selected and run by
`runner.py`, reported by `report.py`, and driven from the command line by `cli.py`; each suite
is a package (`endpoint/`, `platform/`) exposing SUITE, OPTIONS (its click options), open_target and banner.
"""
