"""Finding the local Cosmos DB server: a missing install fails with the fix in the message."""

import pytest

from tests.support.cosmos_server import LocalCosmosServer, LocalCosmosUnavailable, find_server


def test_missing_node_modules_says_to_run_npm_ci(tmp_path):
    with pytest.raises(LocalCosmosUnavailable, match="run `npm ci`"):
        find_server(tmp_path)
    with pytest.raises(LocalCosmosUnavailable, match="run `npm ci`"):
        LocalCosmosServer(tmp_path)


def test_installed_server_is_found_from_a_subfolder(tmp_path):
    package = tmp_path / "node_modules" / "@vercel" / "cosmosdb-server"
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "cli.js").write_text("")
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert find_server(nested) == package
