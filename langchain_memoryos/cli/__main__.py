"""``python -m langchain_memoryos.cli``: the ``memoryos`` command."""

from langchain_memoryos.cli.app import main

if __name__ == "__main__":
    main()
