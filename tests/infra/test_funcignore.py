"""``.funcignore`` keeps the tools' caches out of the upload.

Core Tools uploads the working tree less ``.funcignore`` (gitignore syntax), not what git
tracks, so every cache, virtual environment or data file lying in the tree would go to the
platform unless ``.funcignore`` names it. The full upload is checked by the slow
``test_upload_set.py``; this one is quick.
"""

import subprocess

import pathspec
import pytest

from tests.infra.checks import REPO

CACHES = (".hypothesis", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".venv", ".data",
          "node_modules", "__pycache__", ".python_packages")
"""Folders the tests, linters, local host or a remote build leave in the tree."""


def funcignore(path=REPO / ".funcignore"):
    return pathspec.PathSpec.from_lines("gitignore", path.read_text().splitlines())


@pytest.mark.parametrize("folder", CACHES)
def test_every_cache_folder_is_left_out(folder):
    assert funcignore().match_file(f"{folder}/some/file"), folder


@pytest.mark.parametrize("path", ["ledger.sqlite", ".data/orders.sqlite-wal", "x.db",
                                  "clients.dev.json", "deploy-errors.txt",
                                  "operator-roles.json"])
def test_local_data_and_the_deploy_steps_files_are_left_out(path):
    assert funcignore().match_file(path), path


def test_whatever_git_ignores_in_this_tree_is_not_uploaded():
    listed = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard",
                             "--directory"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.split()
    spec = funcignore()
    # A listed folder ends in "/": ask about a file inside it, as the upload walks files.
    uploaded = [p for p in listed if not spec.match_file(p + "f" if p.endswith("/") else p)]
    assert uploaded == []


def test_the_check_sees_a_cache_left_in(tmp_path):
    lean = tmp_path / ".funcignore"
    lean.write_text((REPO / ".funcignore").read_text().replace(".hypothesis\n", ""))
    assert not funcignore(lean).match_file(".hypothesis/examples/abc")
