"""The bulk write's page analyser: the task its helper process runs (a light import: the controller alone).

The helper process imports this module, not :mod:`~langchain_memoryos.operations.bulk`:
it needs the offline controller's page analysis and nothing of the engine
(about 43 MB resident and a quick start, against 88 MB with the whole
write path imported).
"""

from __future__ import annotations

from langchain_memoryos.controllers.heuristic import HeuristicController, PageContent
from langchain_memoryos.schema import DialoguePage

__all__ = ["page_contents"]


def page_contents(request: tuple[int, list[DialoguePage]]) -> list[PageContent]:
    """The contents of ``(page_keywords, pages)``: what ``analyze_page`` reads off each page alone.

    Example:
        >>> page = DialoguePage(id="p", user_input="I moved to Lyon.", agent_response="Nice city.")
        >>> [c.keywords for c in page_contents((8, [page]))]
        [['lyon', 'moved', 'city']]
    """
    page_keywords, pages = request
    controller = HeuristicController(page_keywords=page_keywords)
    return [controller.page_content(p) for p in pages]
