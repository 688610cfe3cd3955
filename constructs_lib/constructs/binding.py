"""What a generated function can be bound to: a small protocol instead of type checks."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aws_cdk import aws_lambda as lambda_

from .exceptions import ConstructPropsError


@runtime_checkable
class FunctionBinding(Protocol):
    """Something a function uses through the runtime (a ``ShardedCounter`` family): ``bind``
    gives the function the environment and the least-privilege grants it needs."""

    def bind(self, function: lambda_.Function) -> None: ...


def check_bindings(what: str, name: str, bindings: object) -> tuple[FunctionBinding, ...]:
    """``bindings`` as a tuple, each checked to have a ``bind(function)`` method
    (:class:`ConstructPropsError` naming the offending entry otherwise)."""
    if isinstance(bindings, (str, bytes)) or not hasattr(bindings, "__iter__"):
        raise ConstructPropsError(f"{what}: {name}={bindings!r} must be a list of constructs with bind(function)")
    found = tuple(bindings)
    for entry in found:
        if not isinstance(entry, FunctionBinding):
            raise ConstructPropsError(
                f"{what}: {name} entry {entry!r} has no bind(function) method (give ShardedCounter families)"
            )
    return found


__all__ = ["FunctionBinding", "check_bindings"]
