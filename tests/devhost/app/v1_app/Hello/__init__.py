"""An activity that imports shared code of the app relatively, across function folders."""

from ..shared_code import greeting


def main(name: str) -> str:
    return greeting(name)
