"""Read the shell commands of a Markdown document the way a new user copies them.

Why: docs/deploy.md is followed on paper by people without the project's context. A
command that uses ``$VAR`` before any block has set it, or that still holds a placeholder
such as ``<subscription>``, fails when pasted. These helpers find both, in document order,
across every ``bash`` / ``sh`` / ``shell`` fenced block.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^```(\w*)\s*$")
_SHELLS = {"bash", "sh", "shell", "console"}
_ASSIGN = re.compile(r"(?:^|[;&|({]\s*|\bexport\s+|\blocal\s+)([A-Za-z_]\w*)=")
_FOR = re.compile(r"\bfor\s+([A-Za-z_]\w*)\s+in\b")
_READ = re.compile(r"\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)")
_USE = re.compile(r"\$\{?([A-Za-z_]\w*)")
_PLACEHOLDER = re.compile(r"<[A-Za-z][\w .-]*>")
_COMMENT = re.compile(r"(^|\s)#.*$")

ENVIRONMENT = frozenset({"HOME", "PATH", "PWD", "USER", "SHELL"})
"""Variables every shell has: they need no definition in the document."""


@dataclass(frozen=True)
class Line:
    """One line of a shell block.

    Attributes
    ----------
    number : int
        Line number in the document (1-based).
    text : str
        The line without its comment.
    block : int
        Index of its block in the document (0-based).
    """

    number: int
    text: str
    block: int


def shell_lines(markdown: str) -> list[Line]:
    """Every line of every shell code block, comments removed, in document order."""
    lines: list[Line] = []
    language: str | None = None
    block = -1
    for number, raw in enumerate(markdown.splitlines(), start=1):
        fence = _FENCE.match(raw.strip())
        if fence:
            if language is None:
                language = fence.group(1).lower()
                block += 1
            else:
                language = None
            continue
        if language in _SHELLS:
            text = _COMMENT.sub("", raw).rstrip()
            if text.strip():
                lines.append(Line(number, text, block))
    return lines


def undefined_variables(markdown: str) -> list[tuple[int, str]]:
    """``$VAR`` uses that no earlier line (of any shell block) defines.

    A definition is ``VAR=...`` (also after ``export``), ``for VAR in`` or ``read VAR``.
    Uses on the line that defines a variable see only earlier definitions, except a
    ``for`` variable, which its loop body uses on later lines.

    Returns
    -------
    list of (int, str)
        (line number, variable) of each use before a definition, in document order.
    """
    defined = set(ENVIRONMENT)
    missing = []
    for line in shell_lines(markdown):
        defined.update(_FOR.findall(line.text))  # a loop variable is set before its body
        for name in _USE.findall(line.text):
            if name not in defined:
                missing.append((line.number, name))
        defined.update(_ASSIGN.findall(line.text))
        defined.update(_READ.findall(line.text))
    return missing


def placeholders(markdown: str) -> list[tuple[int, str]]:
    """``<placeholder>`` texts in shell blocks (a pasted command would use them as is)."""
    return [(line.number, match) for line in shell_lines(markdown)
            for match in _PLACEHOLDER.findall(line.text)]


def enclosing_loop(markdown: str, needle: str) -> list[str]:
    """The lines of the ``for``/``until``/``while`` loop around the first line with ``needle``.

    Returns
    -------
    list of str
        From the loop's first line to its ``done``; empty if ``needle`` is not in a loop.
    """
    lines = shell_lines(markdown)
    index = next((i for i, line in enumerate(lines) if needle in line.text), None)
    if index is None:
        return []
    block = lines[index].block
    opener = re.compile(r"^\s*(for|until|while)\b")
    for start in range(index, -1, -1):
        if lines[start].block != block:
            break
        if opener.match(lines[start].text):
            depth = 0
            for end in range(start, len(lines)):
                if lines[end].block != block:
                    break
                if re.search(r"\bdo\b", lines[end].text):
                    depth += 1
                if re.match(r"^\s*done\b", lines[end].text):
                    depth -= 1
                    if depth == 0:
                        if end >= index:
                            return [line.text for line in lines[start:end + 1]]
                        break
    return []
