"""Benchmarks against the upstream agent (corecoder 0.8.0 from PyPI): `python -m benchmarks`, see README.md."""
