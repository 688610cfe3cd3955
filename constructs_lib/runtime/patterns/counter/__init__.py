"""Write-sharded counters: shard sizing, the item layout and spec, the client.

The item layout's names (``PREFIX``, ``SHARD_SK``, ...) are in :mod:`.spec`, the sizing
constants in :mod:`.sizing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._exports import lazy_exports

#: The public surface: name -> the submodule defining it.
EXPORTS = {
    "CounterClient": "client",
    "CounterValue": "client",
    "Increment": "client",
    "CounterSpec": "spec",
    "ShardSizing": "sizing",
    "derive_shards": "sizing",
}

__all__, __getattr__, __dir__ = lazy_exports(__name__, EXPORTS)

if TYPE_CHECKING:
    from .client import CounterClient as CounterClient
    from .client import CounterValue as CounterValue
    from .client import Increment as Increment
    from .sizing import ShardSizing as ShardSizing
    from .sizing import derive_shards as derive_shards
    from .spec import CounterSpec as CounterSpec
