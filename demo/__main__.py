"""``python -m demo``: run the local demo (README command 1, ``make demo``)."""

from demo.run import main

if __name__ == "__main__":
    main()
