"""Entry point of ``python -m client`` (see :mod:`client.cli`)."""

from client.cli import app

if __name__ == "__main__":
    app()
