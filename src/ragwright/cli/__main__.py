"""``python -m ragwright.cli``: the ``ragwright`` command."""

from ragwright.cli.main import main

if __name__ == "__main__":
    main()
