"""An activity in another script file with another entry point (scriptFile, entryPoint)."""


def run(city: str) -> str:
    return f"Goodbye {city}!"
