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
from tests.test_structure import DEPLOYED_MODULES, LAYER, imported_modules

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
                                  "operator-roles.json", "orders.dev.parameters.json",
                                  "service-urls.json",
                                  "app.zip"])
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


def shipped_tops(paths):
    """The top-level modules and packages of the Python files among ``paths`` uploaded."""
    spec = funcignore()
    kept = [p for p in paths if p.endswith(".py") and not spec.match_file(p)
            and not any(spec.match_file("/".join(p.split("/")[:i]) + "/")
                        for i in range(1, p.count("/") + 1))]
    return {p.split("/")[0] for p in kept}


def test_the_upload_holds_the_deployed_layers_whole_and_nothing_else():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    assert shipped_tops(tracked) == set(LAYER) | set(DEPLOYED_MODULES)
    split = [p for p in tracked if p.endswith(".py") and p.split("/")[0] in LAYER
             and funcignore().match_file(p)]
    assert split == []  # no deployed package is cut file by file


def reached_packages(start):
    """The repository's top-level packages that module ``start`` imports, transitively."""
    project = {p.name for p in REPO.iterdir() if (p / "__init__.py").exists()}
    seen, todo, reached = set(), [start], set()
    while todo:
        name = todo.pop()
        for stem in (REPO / name.replace(".", "/"), REPO / name.replace(".", "/") / "__init__"):
            path = stem.with_suffix(".py")
            if path.exists():
                for imported in imported_modules(path):
                    parts = imported.split(".")
                    if parts[0] not in project:
                        continue
                    reached.add(parts[0])
                    prefixes = {".".join(parts[:n]) for n in range(1, len(parts) + 1)}
                    todo += sorted(prefixes - seen)
                    seen |= prefixes
    return reached


def test_the_app_reaches_exactly_the_deployed_layers():
    assert reached_packages("function_app") == set(LAYER)


def test_the_reach_check_sees_the_local_host():
    # The check itself can fail: the local host's sample app reaches devhost.
    assert "devhost" in reached_packages("tests.devhost.sample_app.function_app")
