"""Versions in the sort key: ``PROFILE#v3`` (default) or ``PROFILE@3``.

Version ``0`` is the latest copy (rewritten on every change) and ``1..N`` the history, all in one
partition: a GetItem on ``v0`` reads the current state, a ``begins_with`` query on
:meth:`SortKeyVersions.prefix` lists every revision. Prefer ``"hash_v"`` (no value can forge the
marker); ``"at"`` can collide when the last component may contain ``@``. Give a ``width`` to read
history in numeric order. For any ``sk`` and version ``n``, ``split(add(sk, n)) == (sk, n)``.

See docs/adr/0011-versions-in-the-sort-key.md.
"""

from __future__ import annotations

from typing import Literal

from constructs_lib.runtime.exceptions import KeyValueError

__all__ = ["AT", "HASH_V", "MAX_WIDTH", "SortKeyVersions", "VersionStyle"]

VersionStyle = Literal["hash_v", "at"]

MAX_WIDTH = 38
"""Widest version padding (DynamoDB numbers carry at most 38 digits)."""

_MARKERS: dict[str, str] = {"hash_v": "#v", "at": "@"}


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class SortKeyVersions:
    """Add, read and strip version suffixes of sort keys.

    Parameters
    ----------
    style : {"hash_v", "at"}, optional
        ``"hash_v"`` renders ``<sk>#v<n>``; ``"at"`` renders ``<sk>@<n>``. Default
        ``"hash_v"``.
    width : int, optional
        Zero-pad versions to this many digits so they sort numerically (0..38). ``0`` means
        unpadded, where ``v10`` sorts before ``v2``; a width is recommended. Default ``0``.

    Raises
    ------
    KeyValueError
        For an unknown style or a width that is not an int in 0..38.
    """

    __slots__ = ("_style", "_width", "_marker")

    def __init__(self, style: VersionStyle = "hash_v", *, width: int = 0) -> None:
        if style not in _MARKERS:
            raise KeyValueError(
                f"style {_show(style)} is unknown; style must be one of {', '.join(_MARKERS)}"
            )
        if isinstance(width, bool) or not isinstance(width, int) or not 0 <= width <= MAX_WIDTH:
            raise KeyValueError(
                f"width {_show(width)} is invalid; width must be an int between 0 (unpadded) "
                f"and {MAX_WIDTH}"
            )
        self._style = style
        self._width = width
        self._marker = _MARKERS[style]

    @property
    def style(self) -> VersionStyle:
        """The suffix style, ``"hash_v"`` or ``"at"``."""
        return self._style

    @property
    def width(self) -> int:
        """Digits of zero padding; ``0`` means unpadded."""
        return self._width

    @property
    def marker(self) -> str:
        """Text between the sort key and the version digits: ``"#v"`` or ``"@"``."""
        return self._marker

    def __repr__(self) -> str:
        return f"SortKeyVersions({self._style!r}, width={self._width})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SortKeyVersions):
            return NotImplemented
        return (self._style, self._width) == (other._style, other._width)

    def __hash__(self) -> int:
        return hash((self._style, self._width))

    # ------------------------------------------------------------------ helpers

    def _check_sk(self, sk: object) -> str:
        if not isinstance(sk, str):
            raise KeyValueError(
                f"sort key {_show(sk)} is a {type(sk).__name__}; sort keys must be str"
            )
        if not sk:
            raise KeyValueError(f"sort key {_show(sk)} is empty; sort keys must be non-empty")
        return sk

    def _digits(self, version: object) -> str:
        if isinstance(version, bool) or not isinstance(version, int):
            raise KeyValueError(
                f"version {_show(version)} is a {type(version).__name__}; versions must be "
                "non-negative ints"
            )
        if version < 0:
            raise KeyValueError(
                f"version {_show(version)} is negative; versions must be non-negative ints"
            )
        digits = str(version)
        if self._width:
            if len(digits) > self._width:
                raise KeyValueError(
                    f"version {_show(version)} has more than {self._width} digits; it does not "
                    f"fit the padding width {self._width} and would sort wrongly"
                )
            digits = digits.zfill(self._width)
        return digits

    # ------------------------------------------------------------------ API

    def add(self, sk: str, version: int) -> str:
        """Return ``sk`` with ``version`` appended.

        Parameters
        ----------
        sk : str
            The unversioned sort key (non-empty).
        version : int
            Non-negative version; ``0`` is the latest copy.

        Returns
        -------
        str
            ``<sk>#v<n>`` or ``<sk>@<n>``, zero-padded to ``width``.

        Raises
        ------
        KeyValueError
            If ``sk`` is not a non-empty str, or ``version`` is not a non-negative int that
            fits ``width``.
        """
        return self._check_sk(sk) + self._marker + self._digits(version)

    def split(self, sk: str) -> tuple[str, int | None]:
        """Split a sort key into its base and version.

        Parameters
        ----------
        sk : str
            A sort key, versioned or not.

        Returns
        -------
        tuple[str, int | None]
            ``(base, version)``; ``(sk, None)`` when ``sk`` has no version suffix.

        Raises
        ------
        KeyValueError
            If ``sk`` is not a non-empty str, or its suffix is all digits but not canonical
            (wrong width; leading zeros when unpadded), or the base before it is empty.
        """
        self._check_sk(sk)
        base, marker, digits = sk.rpartition(self._marker)
        if not marker or not digits or not (digits.isascii() and digits.isdigit()):
            return sk, None
        if self._width:
            if len(digits) != self._width:
                raise KeyValueError(
                    f"sort key {_show(sk)} has a malformed version suffix "
                    f"{_show(marker + digits)}; versions must have exactly {self._width} digits"
                )
        elif len(digits) > 1 and digits.startswith("0"):
            raise KeyValueError(
                f"sort key {_show(sk)} has a malformed version suffix {_show(marker + digits)}; "
                "unpadded versions must not have leading zeros"
            )
        if not base:
            raise KeyValueError(
                f"sort key {_show(sk)} has a version suffix but no base; a versioned sort key "
                f"is <sk>{self._marker}<n> with a non-empty <sk>"
            )
        return base, int(digits)

    def get(self, sk_with_version: str) -> int | None:
        """Return the version of a sort key, or ``None`` if it is unversioned.

        Raises
        ------
        KeyValueError
            As for :meth:`split`.
        """
        return self.split(sk_with_version)[1]

    def remove(self, sk_with_version: str) -> str:
        """Return the sort key without its version suffix.

        Raises
        ------
        KeyValueError
            If the sort key has no version suffix, or as for :meth:`split`.
        """
        base, version = self.split(sk_with_version)
        if version is None:
            raise KeyValueError(
                f"sort key {_show(sk_with_version)} has no version suffix; expected "
                f"<sk>{self._marker}<n>"
            )
        return base

    def latest(self, sk: str) -> str:
        """Return the sort key of the latest copy, i.e. version ``0``."""
        return self.add(sk, 0)

    def prefix(self, sk: str) -> str:
        """Return the ``begins_with`` prefix that lists every version of ``sk``.

        Note that with ``"hash_v"`` the prefix ``<sk>#v`` also matches unrelated keys whose
        next component starts with ``v`` (``<sk>#vip``), and with ``"at"`` keys whose last
        value continues with ``@`` — filter results with :meth:`get` if such keys can exist.
        """
        return self._check_sk(sk) + self._marker


HASH_V = SortKeyVersions("hash_v")
"""``<sk>#v<n>``, unpadded."""

AT = SortKeyVersions("at")
"""``<sk>@<n>``, unpadded."""
