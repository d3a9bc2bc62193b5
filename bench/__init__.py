"""Benchmarks a person runs (``python -m bench.bench_bridge``); they print tables, they are not tests."""
