"""Every command line's help names each option whole, also on an 80-column terminal."""

import re

import pytest
import typer
from typer.testing import CliRunner

import client.cli
import demo.run
import devhost.run.cli
import opscli.cli

APPS = {"devhost": devhost.run.cli.app, "opscli": opscli.cli.app, "client": client.cli.app,
        "demo": demo.run.cli()}


def _commands(app: typer.Typer) -> list[tuple[list[str], object]]:
    root = typer.main.get_command(app)
    subcommands = getattr(root, "commands", None)  # a group of commands, or one command
    return [([name], cmd) for name, cmd in subcommands.items()] if subcommands else [([], root)]


@pytest.mark.parametrize("name", sorted(APPS))
def test_help_names_every_option_whole_at_80_columns(name):
    runner, checked = CliRunner(), 0
    for args, command in _commands(APPS[name]):
        result = runner.invoke(APPS[name], [*args, "--help"], env={"COLUMNS": "80"})
        assert result.exit_code == 0, result.output
        options = [o for p in command.params for o in p.opts if o.startswith("--")]
        checked += len(options)
        missing = [o for o in options if o not in result.output]
        assert not missing, f"{name} {' '.join(args)}: {missing} cut in\n{result.output}"
    assert checked >= 3


MARKUP = re.compile(r"``|:(func|data|class|meth|mod|attr):`|\b[SAVXDLC]\d{1,2}\b")
"""reStructuredText roles and literals, and the requirement ids of docs/requirements.md."""


@pytest.mark.parametrize("name", sorted(APPS))
def test_help_shows_no_markup_and_no_requirement_ids(name):
    runner, found = CliRunner(), []
    for args, _ in [([], None), *_commands(APPS[name])]:
        result = runner.invoke(APPS[name], [*args, "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        found += [f"{' '.join([name, *args])}: {line.strip()}"
                  for line in result.output.splitlines() if MARKUP.search(line)]
    assert not found, "\n".join(found)
