"""docs/services.md lists exactly the files a new remote service with an undo takes.

Everything else derives from ``infra/services.json``; the list stays short (fewer than 15
files) and names files that exist, and its stated count is the table's.
"""

import re

from tests.infra.checks import REPO

DOC = REPO / "docs" / "services.md"
ROW = re.compile(r"^\| (\d+) \| `([^`]+)` \|", re.MULTILINE)


def listed_files() -> list[tuple[int, str]]:
    section = DOC.read_text(encoding="utf-8").split("## Adding a remote service", 1)[1]
    return [(int(n), path) for n, path in ROW.findall(section)]


def test_the_files_a_new_service_takes_exist_are_numbered_and_fewer_than_15():
    rows = listed_files()
    assert [n for n, _ in rows] == list(range(1, len(rows) + 1))
    assert [path for _, path in rows if not (REPO / path).is_file()] == []
    assert len({path for _, path in rows}) == len(rows) < 15
    assert f"exactly the **{len(rows)} files**" in DOC.read_text(encoding="utf-8")


def test_the_catalogue_and_the_versions_are_among_them():
    paths = {path for _, path in listed_files()}
    assert {"infra/services.json", "infra/queues.json", "orders/names.py",
            "orchestrators/live_workflow.py", "host.json"} <= paths
    # Derived from the catalogue: never edited for a new service.
    assert not paths & {"agents/blueprint.py", "orders/compensation/plan.py",
                        "orders/models/compensation.py", "orders/budget.py",
                        "orders/remote_steps.py", "tests/e2e/harness.py"}
