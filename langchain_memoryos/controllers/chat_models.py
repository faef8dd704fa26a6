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
import re

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from langchain_memoryos.errors import InvalidTypeError

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
        ValueError: the name does not give a chat model (no provider can be told, no API key for it ...);
            one line naming the fix.

    Example:
        >>> resolve_chat_model(3)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        langchain_memoryos.errors.InvalidTypeError: ...
        >>> resolve_chat_model("no-such-model")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ValueError: cannot create the chat model 'no-such-model': langchain cannot tell its provider; name it as ...
    """
    if isinstance(model, BaseChatModel):
        return model
    if not isinstance(model, str) or not model.strip():
        raise InvalidTypeError(f"model must be a BaseChatModel or a model name string, got {model!r}")
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
    try:
        resolved: BaseChatModel = init_chat_model(model)
    except Exception as exc:
        raise _model_error(model, exc) from exc
    return resolved


_KEY_VARIABLE = re.compile(r"\b([A-Z][A-Z0-9_]*_API_KEY)\b")


def _model_error(model: str, exc: Exception) -> Exception:
    """``init_chat_model``'s failure for ``model`` as one line naming the fix (an ``ImportError`` stays one).

    Example:
        >>> print(_model_error("gpt-x", ValueError("Missing credentials: set the `OPENAI_API_KEY` variable.")))
        ... # doctest: +ELLIPSIS
        cannot create the chat model 'gpt-x': no API key for its provider; set OPENAI_API_KEY, point OPENAI_BASE_URL ...
    """
    reason = " ".join(str(exc).split()) or type(exc).__name__
    head = f"cannot create the chat model {model!r}"
    if isinstance(exc, ImportError):
        return ImportError(f"{head}: {reason}")
    lowered = reason.lower()
    if (
        "infer model provider" in lowered
        or "unsupported model_provider" in lowered
        or "unsupported provider" in lowered
    ):
        return ValueError(
            f"{head}: langchain cannot tell its provider; name it as 'provider:model' (e.g. 'openai:gpt-4o-mini', "
            "'anthropic:claude-3-5-haiku-latest'), or pass a chat model object."
        )
    if "api_key" in lowered or "api key" in lowered or "credentials" in lowered:
        found = _KEY_VARIABLE.search(reason)
        variable = found.group(1) if found else "the provider's API key variable (e.g. OPENAI_API_KEY)"
        return ValueError(
            f"{head}: no API key for its provider; set {variable}, point OPENAI_BASE_URL at an OpenAI-compatible "
            "server, or pass a chat model object (model=ChatOpenAI(...))."
        )
    return ValueError(f"{head}: {reason}; check the name, or pass a chat model object.")
