"""Cursor texts stay byte for byte what they were: a fixed signer and fixed queries give the
cursors the signer wrote before its digests were cached and its canonical JSON was inlined."""

from __future__ import annotations

import itertools

from constructs_lib.runtime.cursors import CursorSigner, query_parts

#: Written by the code before the change, for the queries of ``_cases`` in order.
GOLDEN = [
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI3UxIn19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJZRlcwNEp6NTFjTSIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6IlZfN1FFNG8yQjhRIiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJzaGFyZCBjb3VudCI6IjBIQWhJd21JQ0lvIiwidGFibGUiOiJWcW1vRy1tYjRTSSJ9fQ.OTR9QxlhconsHOpn2xW1QA',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI3UxIn19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJnaUYxbGI3TFNGZyIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6IlZfN1FFNG8yQjhRIiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJ0YWJsZSI6IlZxbW9HLW1iNFNJIn19.E1148Jwq-sQYni_mk5TeKw',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI1x1MDBlOSN4In19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJZRlcwNEp6NTFjTSIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6InRpWDBDUDZ6aC04IiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJzaGFyZCBjb3VudCI6IjBIQWhJd21JQ0lvIiwidGFibGUiOiJWcW1vRy1tYjRTSSJ9fQ.tFP9DRjlZc_GKNPrEwZfgA',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI1x1MDBlOSN4In19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJnaUYxbGI3TFNGZyIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6InRpWDBDUDZ6aC04IiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJ0YWJsZSI6IlZxbW9HLW1iNFNJIn19.uavreS827Ulxyb5_gbsKFQ',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI2FcdTIwMjhiIn19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJZRlcwNEp6NTFjTSIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6IjVTTU5TRXV2ZXVnIiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJzaGFyZCBjb3VudCI6IjBIQWhJd21JQ0lvIiwidGFibGUiOiJWcW1vRy1tYjRTSSJ9fQ.sYeGzUwG4an1sJS_YmHBsQ',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSI2FcdTIwMjhiIn19LCJxIjp7ImFjY2VzcyBwYXR0ZXJuIjoiY0xMaXl1WW1YaEUiLCJkaXJlY3Rpb24iOiJnaUYxbGI3TFNGZyIsImZpbHRlciAoZXhwcmVzc2lvbiBvciB2YWx1ZXMpIjoiQ2ZJeVF1WDVVWGciLCJpbmRleCI6IlFBXzRCX2ZrOGhVIiwia2V5IHZhbHVlcyI6IjVTTU5TRXV2ZXVnIiwibW9kZWwiOiJRYUNEdXJmOVhIayIsIm90aGVyIHJlcXVlc3Qgb3B0aW9ucyI6Im4xWUJhWnd0eVMwIiwicHJvamVjdGlvbiAoYXR0cmlidXRlcz0pIjoiMzFpTTNGUlJmVUUiLCJ0YWJsZSI6IlZxbW9HLW1iNFNJIn19.9ILjaQ0l6tohx5Nt5nWgLg',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSIyJ9fSwicSI6eyJhY2Nlc3MgcGF0dGVybiI6ImNMTGl5dVltWGhFIiwiZGlyZWN0aW9uIjoiWUZXMDRKejUxY00iLCJmaWx0ZXIgKGV4cHJlc3Npb24gb3IgdmFsdWVzKSI6IkNmSXlRdVg1VVhnIiwiaW5kZXgiOiJRQV80Ql9mazhoVSIsImtleSB2YWx1ZXMiOiJOWDNMbjc4OTRMSSIsIm1vZGVsIjoiUWFDRHVyZjlYSGsiLCJvdGhlciByZXF1ZXN0IG9wdGlvbnMiOiJuMVlCYVp3dHlTMCIsInByb2plY3Rpb24gKGF0dHJpYnV0ZXM9KSI6IjMxaU0zRlJSZlVFIiwic2hhcmQgY291bnQiOiIwSEFoSXdtSUNJbyIsInRhYmxlIjoiVnFtb0ctbWI0U0kifX0.JJ6lwZX72GDar6QWoSe7dA',
    'eyJrIjp7IlBLIjp7IlMiOiJVU0VSIyJ9fSwicSI6eyJhY2Nlc3MgcGF0dGVybiI6ImNMTGl5dVltWGhFIiwiZGlyZWN0aW9uIjoiZ2lGMWxiN0xTRmciLCJmaWx0ZXIgKGV4cHJlc3Npb24gb3IgdmFsdWVzKSI6IkNmSXlRdVg1VVhnIiwiaW5kZXgiOiJRQV80Ql9mazhoVSIsImtleSB2YWx1ZXMiOiJOWDNMbjc4OTRMSSIsIm1vZGVsIjoiUWFDRHVyZjlYSGsiLCJvdGhlciByZXF1ZXN0IG9wdGlvbnMiOiJuMVlCYVp3dHlTMCIsInByb2plY3Rpb24gKGF0dHJpYnV0ZXM9KSI6IjMxaU0zRlJSZlVFIiwidGFibGUiOiJWcW1vRy1tYjRTSSJ9fQ.w23U4iEkm977q3ZgmYSK1g',
]


def _cases() -> list[tuple[dict[str, object], dict[str, object], int | None]]:
    out = []
    for user, descending in itertools.product(["u1", "é#x", "a\u2028b", ""], [True, False]):
        params = {
            "TableName": "t", "KeyConditionExpression": "#n0 = :v0 AND begins_with(#n1, :v1)",
            "ExpressionAttributeNames": {"#n0": "PK", "#n1": "SK"},
            "ExpressionAttributeValues": {":v0": {"S": "USER#" + user}, ":v1": {"S": "ORDER#"}, ":v2": {"N": "5"},
                                          ":v3": {"B": b"x"}},
            "FilterExpression": "#n0 <> :v2 AND #n1 <> :v3", "ProjectionExpression": "#n0, #n1",
            "ScanIndexForward": descending, "ConsistentRead": False, "Limit": 10, "Select": "ALL",
        }
        out.append((params, {"PK": {"S": "USER#" + user}}, 4 if descending else None))
    return out


def test_cursor_texts_match_the_golden_copy() -> None:
    # GIVEN a signer with a fixed key and bound parts, and queries with text, numbers, binary and a filter
    signer = CursorSigner(b"k" * 20, bound={"table": '"t"', "model": "abc"})
    for (params, last, shards), want in zip(_cases(), GOLDEN, strict=True):
        # WHEN a cursor is made after ``last``
        parts = query_parts("p", params, shards=shards)
        cursor = signer.encode(last, parts)
        # THEN it is the very text the signer wrote before, and it reads back to ``last``
        assert cursor == want
        assert signer.decode(cursor, parts) == last
