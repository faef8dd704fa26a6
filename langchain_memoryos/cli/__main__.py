"""``python -m langchain_memoryos.cli``: the ``memoryos`` command."""

from langchain_memoryos.cli import main

main()
