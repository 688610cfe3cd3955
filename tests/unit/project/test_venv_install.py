"""scripts/venv_install.py (docs/adr/0060-demo-time.md): pip's configuration, as ``pip config list``
reports it, becomes uv's options; an option uv cannot take sends the install to pip; and the
Makefile's install stamps go through it, `make demo`'s without the dev extra."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[3]


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("venv_install", REPO / "scripts" / "venv_install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("venv_install", module)
    spec.loader.exec_module(module)
    return module


venv_install = load()

LISTING = """\
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='file:///opt/pypi/simple file:///opt/pypi-more/simple'
global.find-links='/opt/wheels'
install.find-links='/srv/install-wheels'
:env:.default-timeout='180'
:env:.disable-pip-version-check='1'
:env:.find-links='/opt/wheels'
download.dest='/elsewhere'
"""


def test_pip_options_take_pip_precedence() -> None:
    # GIVEN a listing with find-links in the global and install sections and in PIP_FIND_LINKS
    # WHEN it is read
    options = venv_install.pip_options(LISTING)
    # THEN the variable wins over both files, install over global, and other commands' sections are left out
    assert options["find-links"] == "/opt/wheels"
    assert venv_install.pip_options("global.find-links='/a'\ninstall.find-links='/b'\n")["find-links"] == "/b"
    assert "dest" not in options
    assert options["extra-index-url"] == "file:///opt/pypi/simple file:///opt/pypi-more/simple"


def test_every_index_find_link_constraint_and_certificate_reaches_uv() -> None:
    # GIVEN this machine's kind of pip configuration WHEN it is translated
    translated = venv_install.uv_arguments(venv_install.pip_options(LISTING))
    assert not isinstance(translated, str)
    args, env = translated
    pairs = list(zip(args, args[1:], strict=False))
    # THEN both extra indexes, the find-links and the constraints file are uv options, pip's way of
    # choosing among indexes is kept, bytecode is compiled, and the certificate and timeout are set
    for flag, value in (("--extra-index-url", "file:///opt/pypi/simple"),
                        ("--extra-index-url", "file:///opt/pypi-more/simple"),
                        ("--find-links", "/opt/wheels"), ("--constraint", "/etc/xdg/pip/constraints.txt"),
                        ("--index-strategy", "unsafe-best-match")):
        assert (flag, value) in pairs
    assert "--compile-bytecode" in args
    assert env == {"SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt", "UV_HTTP_TIMEOUT": "180"}


def test_an_option_uv_cannot_take_is_named_not_dropped() -> None:
    # GIVEN pip options with no uv equivalent in the translation
    for listing in ("global.user='true'\n", ":env:.src='/tmp/src'\n", "install.prefer-binary='1'\n"):
        # WHEN translated THEN the option is returned (the install then runs pip), never ignored
        assert venv_install.uv_arguments(venv_install.pip_options(listing)) == listing.split(".", 1)[1].split("=")[0]


def test_the_demo_stamp_installs_no_dev_tools_and_the_others_add_them() -> None:
    # GIVEN the Makefile
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")

    def recipe(target: str) -> str:
        return makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]

    # THEN the demo's venv stamp installs the cdk and testing extras with the pinned uv, through the helper
    venv = recipe("$(STAMPS)/venv")
    assert 'venv_install.py --quiet -e ".[cdk,testing]"' in venv and "uv==$(UV_VERSION)" in venv
    assert re.search(r"^UV_VERSION := \d+\.\d+\.\d+$", makefile, flags=re.MULTILINE)
    assert "dev" not in venv.split("\n", 1)[1]
    # AND make demo reaches only that stamp, while test, unit, lint and soak reach the dev one
    assert recipe("setup").split("\n")[0].strip() == "$(STAMPS)/venv $(STAMPS)/npm $(STAMPS)/java"
    assert "$(STAMPS)/dev" in recipe("setup-dev").split("\n")[0]
    for target in ("test", "unit", "soak"):
        assert recipe(target).split("\n")[0].strip() == "setup-dev", target
    assert recipe("lint").split("\n")[0].strip() == "$(STAMPS)/dev"
    assert 'venv_install.py --quiet -e ".[cdk,dev]"' in recipe("$(STAMPS)/dev")
