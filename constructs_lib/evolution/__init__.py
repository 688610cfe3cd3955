"""Model evolution at synth time and on the command line: the model lock, the classified diff
with its one-GSI-per-deployment rollout plan, and the key-length pre-flight.

Imports ``model`` and ``runtime`` only; never shipped in a Lambda asset (the backfill job that
rewrites keys lives in ``runtime/patterns/backfill``). See docs/adr/0110-model-evolution.md.
"""
