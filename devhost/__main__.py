"""``python -m devhost``: run the local host and inspect its task hub and queues."""

from devhost.run.cli import main

if __name__ == "__main__":
    main()
