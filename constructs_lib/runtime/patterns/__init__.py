"""Runtime code of the patterns built on the single table: one sub-package each (spec + client)."""
