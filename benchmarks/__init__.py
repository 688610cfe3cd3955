"""Benchmarks of constructs_lib: ratios against baselines measured in the same run.

Run with ``make bench`` or ``python -m benchmarks.run [names...]``; see ``benchmarks/README.md``.
Not part of the wheel, and never a pass/fail test.
"""
