"""Chat models from a name: ``init_chat_model`` strings and OpenAI-compatible servers.

Example:
    >>> from langchain_core.language_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> fake = GenericFakeChatModel(messages=iter([AIMessage("hi")]))
    >>> resolve_chat_model(fake) is fake
    True
"""

from __future__ import annotations

import os

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

__all__ = ["resolve_chat_model"]


def resolve_chat_model(model: BaseChatModel | str, *, base_url: str | None = None) -> BaseChatModel:
    """A chat model from a model object, an ``init_chat_model`` string, or a model on an OpenAI-compatible server.

    Args:
        model: a ``BaseChatModel`` (returned as is), or a name such as
            ``"openai:gpt-4o-mini"`` / ``"anthropic:claude-3-5-haiku-latest"``.
        base_url: an OpenAI-compatible endpoint (vLLM, Ollama, LM Studio …);
            ``OPENAI_BASE_URL`` is used when not given. With a base URL the name
            is the server's model name and ``langchain-openai`` is needed.

    Returns:
        The chat model.

    Raises:
        ImportError: the package for that kind of model is missing; the message names the extra.
        TypeError: ``model`` is neither a chat model nor a string.

    Example:
        >>> resolve_chat_model(3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        TypeError: ...
    """
    if isinstance(model, BaseChatModel):
        return model
    if not isinstance(model, str) or not model.strip():
        raise TypeError(f"model must be a BaseChatModel or a model name string, got {model!r}")
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    if url:
        try:
            from langchain_openai import ChatOpenAI
        except ImportError as exc:
            raise ImportError(
                "an OpenAI-compatible base URL needs langchain-openai; install the 'openai' extra: "
                "pip install 'langchain-memoryos[openai]'"
            ) from exc
        name = model.split(":", 1)[1] if model.startswith("openai:") else model
        key = SecretStr(os.environ.get("OPENAI_API_KEY") or "not-needed")  # local servers take any key
        chat: BaseChatModel = ChatOpenAI(model=name, base_url=url, api_key=key)
        return chat
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as exc:
        raise ImportError(
            f"a model name such as {model!r} needs langchain's init_chat_model; install the 'agents' extra: "
            "pip install 'langchain-memoryos[agents]' (plus the provider's package, e.g. langchain-openai)"
        ) from exc
    resolved: BaseChatModel = init_chat_model(model)
    return resolved
