"""``python -m langchain_memoryos.cli.demo``: the offline demo."""

from langchain_memoryos.cli.demo.run import main

if __name__ == "__main__":
    raise SystemExit(main())
