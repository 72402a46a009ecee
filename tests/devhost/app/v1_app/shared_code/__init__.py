"""Code shared by function folders (imported as __app__.shared_code)."""


def greeting(name: str) -> str:
    return f"Hello {name}!"
