"""The script an interpreter of a function's Python version runs to compile the asset's modules.

``python3.X -I -S pyc_worker.py`` reads ``{asset path: source}`` as JSON on stdin and writes
``{"tag", "version", "pycs": {path: base64 pyc}, "errors": {path: message}}`` as JSON on stdout;
``pyc_worker.py --version`` prints ``MAJOR.MINOR FULL_VERSION``. The pycs are unchecked-hash pycs
(PEP 552). Standard library only: it runs outside this package's interpreter and import path
(:mod:`.bytecode` starts it).
"""

from __future__ import annotations

import base64
import importlib.util
import json
import marshal
import sys

__all__ = ["compile_sources", "main", "unchecked_hash_pyc", "version"]


def unchecked_hash_pyc(source: bytes, path: str) -> bytes:
    """The pyc of ``source`` as this interpreter writes it, flagged unchecked-hash: no timestamp,
    so the same source gives the same bytes. Raises ``SyntaxError``."""
    # dont_inherit: this script's own ``from __future__`` imports must not apply to the module.
    code = compile(source, path, "exec", dont_inherit=True, optimize=0)
    flags = (1).to_bytes(4, "little")  # hash-based, check_source off
    return importlib.util.MAGIC_NUMBER + flags + importlib.util.source_hash(source) + marshal.dumps(code)


def compile_sources(sources: dict[str, str]) -> dict[str, object]:
    """The answer for ``sources``: every pyc (base64) and, per module that does not compile, its error."""
    pycs: dict[str, str] = {}
    errors: dict[str, str] = {}
    for path, text in sources.items():
        try:
            pycs[path] = base64.b64encode(unchecked_hash_pyc(text.encode("utf-8"), path)).decode()
        except SyntaxError as exc:
            errors[path] = f"line {exc.lineno}: {exc.msg}"
    return {"tag": sys.implementation.cache_tag, "version": sys.version.split()[0], "pycs": pycs, "errors": errors}


def version() -> str:
    """``MAJOR.MINOR FULL_VERSION`` of this interpreter (``"3.13 3.13.0"``)."""
    return f"{sys.version_info[0]}.{sys.version_info[1]} {sys.version.split()[0]}"


def main(argv: list[str]) -> int:
    """Answer ``--version``, or compile the JSON on stdin (see the module docstring)."""
    if argv == ["--version"]:
        sys.stdout.write(version() + "\n")
        return 0
    if argv:
        sys.stderr.write(f"usage: pyc_worker.py [--version] (got {argv!r})\n")
        return 2
    json.dump(compile_sources(json.load(sys.stdin)), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
