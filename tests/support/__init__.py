"""What tests of every area share, each defined once, by concern (fixtures built on these live in tests/conftest.py)."""
