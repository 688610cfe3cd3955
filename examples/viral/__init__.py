"""Viral-video example: a write-sharded, idempotent view counter (see README.md)."""
