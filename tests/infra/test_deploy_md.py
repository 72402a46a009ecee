"""docs/deploy.md can be followed on paper: every command pastes as it stands.

Each shell block's ``$VAR`` is set by an earlier line of the document, no command holds a
``<placeholder>``, and the publish, which can fail while the new role assignments
propagate, is retried in a loop that waits between attempts.
"""

import re

from tests.infra.checks import REPO
from tests.infra.doc_commands import enclosing_loop, placeholders, undefined_variables

DEPLOY_MD = (REPO / "docs" / "deploy.md").read_text()


def test_every_variable_is_set_before_a_command_uses_it():
    assert undefined_variables(DEPLOY_MD) == []


def test_no_command_holds_a_placeholder():
    assert placeholders(DEPLOY_MD) == []


def test_publish_is_retried_while_role_assignments_propagate():
    loop = enclosing_loop(DEPLOY_MD, "func azure functionapp publish")
    assert loop, "the publish is not inside a retry loop"
    assert any("sleep" in line for line in loop)
    assert any("break" in line for line in loop)


def test_the_doc_says_how_long_propagation_takes():
    assert "propagat" in DEPLOY_MD and "10 minutes" in DEPLOY_MD


def test_the_steps_define_their_settings_at_the_top():
    first_block = DEPLOY_MD.split("### Steps", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    for name in ("SUBSCRIPTION", "RG", "LOCATION", "PAYMENT_API_URL", "SHIPPING_API_URL"):
        assert f"\n{name}=" in first_block, name


# ---------------------------------------------------------------- the checks can fail
def test_a_variable_used_before_its_definition_is_reported():
    text = "```bash\necho \"$APP\"\nAPP=x\nfor i in 1 2; do echo \"$i $APP\"; done\n```\n"
    assert undefined_variables(text) == [(2, "APP")]


def test_a_variable_defined_only_in_prose_or_another_language_is_reported():
    text = ("Set `RG=x` first.\n```powershell\n$RG = 'x'\n```\n"
            "```bash\naz group show -n \"$RG\"\n```\n")
    assert undefined_variables(text) == [(6, "RG")]


def test_a_placeholder_is_reported_but_a_heredoc_is_not():
    text = "```bash\ncat > f <<EOF\nx\nEOF\naz account set --subscription \"<subscription>\"\n```\n"
    assert placeholders(text) == [(5, "<subscription>")]


def test_a_publish_outside_a_loop_is_found():
    text = "```bash\nfunc azure functionapp publish \"$APP\"\nfor i in 1; do\n  echo\ndone\n```\n"
    assert enclosing_loop(text, "func azure functionapp publish") == []


def settings_table_names():
    """Setting names of the first column of deploy.md's "App settings" table."""
    section = DEPLOY_MD.split("### App settings", 1)[1].split("\n### ", 1)[0]
    names = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names |= {part.strip(" `") for part in first.split(",")}
    return names


def test_the_app_settings_table_lists_every_setting_the_bicep_sets():
    from tests.infra.checks import bicep_app_settings

    assert set(bicep_app_settings()) - settings_table_names() == set()


def test_the_first_deployment_is_retried_on_the_cosmos_principal_race_only():
    loop = enclosing_loop(DEPLOY_MD, "az deployment group create")
    assert loop, "the first deployment is not inside a retry loop"
    text = "\n".join(loop)
    assert 'grep -qiE "principal.*not ?found"' in text
    assert "sleep" in text and text.count("break") == 2


def migration_section():
    return DEPLOY_MD.split("### Moving from the shared `orders` queue", 1)[1].split("\n### ", 1)[0]


def test_the_migration_removes_the_clients_old_data_sender_on_the_shared_queue():
    section = migration_section()
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    assert "--name orders" in block
    assert 'az role assignment delete --ids "$assignment"' in block
    assert block.count('--role "Azure Service Bus Data Sender"') == 3
    assert "[?scope=='$ORDERS_QUEUE_ID']" in block  # on the queue itself, not inherited


def test_no_doc_asks_an_operator_to_resend_a_body_on_its_word():
    operations = (REPO / "docs" / "operations.md").read_text()
    for text in (DEPLOY_MD, operations):
        for sentence in re.split(r"(?<=[.!?|])\s", text):
            lowered = sentence.lower()
            if "resend" in lowered and "body" in lowered:
                assert "never" in lowered, sentence
