"""Lambda entry points bundled into the generated functions (counter aggregator, audit writer)."""
