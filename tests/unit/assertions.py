"""Assertion helpers shared by the unit tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from constructs_lib.runtime.exceptions import KeyValueError


def assert_rejected(call: Callable[[], Any], offending: str, rule_word: str) -> KeyValueError:
    """``call()`` raises KeyValueError whose message shows the offending value and the rule."""
    with pytest.raises(KeyValueError) as info:
        call()
    message = str(info.value)
    # Messages show repr(value) truncated to ~60 characters.
    assert offending[:57] in message, message
    assert rule_word in message, message
    return info.value
