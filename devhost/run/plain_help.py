"""Command-line help as plain text: docstrings keep their markup for readers of the code.

Typer shows a command's docstring as its help; the project's docstrings use
reStructuredText literals and roles and cite requirement ids, which mean nothing on a
terminal. :func:`plain_help` rewrites the help of every command of an app once, at import.
"""

from __future__ import annotations

import inspect
import re

import typer

_ROLE = re.compile(r":(?:func|data|class|meth|mod|attr|exc):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_IDS = r"[SAVXDLC]\d{1,2}"
_ID_LIST = re.compile(rf"(?:,\s*)?\b{_IDS}(?:,\s*{_IDS})*\b")
_EMPTY_BRACKETS = re.compile(r"\s*\(\s*\)")
_LEADING_COMMA = re.compile(r"\(\s*,\s*")


def plain(text: str) -> str:
    """Return ``text`` with RST roles and literals unwrapped and requirement ids removed.

    A role such as ``:mod:`client.submit``` becomes its target, ``client.submit``; a
    double-backquoted literal is put in single quotes; requirement ids such as "(S1)" and
    ", S7, X8" go, with the brackets or commas they leave empty.
    """
    text = _LITERAL.sub(r"'\1'", _ROLE.sub(r"\1", text))
    text = _ID_LIST.sub("", text)
    return _LEADING_COMMA.sub("(", _EMPTY_BRACKETS.sub("", text))


def plain_help(app: typer.Typer) -> typer.Typer:
    """Set the help of ``app``'s callback and commands to their plain docstrings; return it."""
    infos: list[typer.models.CommandInfo | typer.models.TyperInfo] = [
        *app.registered_commands]
    if app.registered_callback is not None:
        infos.append(app.registered_callback)
    for info in infos:
        doc = info.help if isinstance(info.help, str) else inspect.getdoc(info.callback)
        if doc:
            info.help = plain(doc)
    if isinstance(app.info.help, str):
        app.info.help = plain(app.info.help)
    return app
