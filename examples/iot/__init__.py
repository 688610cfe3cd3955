"""IoT telemetry example: time-bucketed sensor readings with TTL retention (see README.md)."""
