"""Built-in example sessions, read from the session files in `resources/examples/` (the package `workbench.resources`).

The examples are ordinary session files (docs/session-format.md), so a lab
can add one by dropping a file there. `list_examples()` gives (key, title)
pairs in menu order (the key is the file name without `.json`) and
`load_example(key)` a fresh Session each time, validated like any file.
"""

from __future__ import annotations

from importlib import resources

from workbench.errors import WorkbenchError
from workbench.documents.session import Session, SessionError, loads

EXAMPLES_PACKAGE = "workbench.resources"
EXAMPLES_FOLDER = "examples"
# Menu order: the seed's path through the chapter; any other example file follows by name.
MENU_ORDER = (
    "gemm-4096-fp16",
    "vector-add",
    "knowledge-check",
    "attention-naive-vs-fused",
    "conv2d",
    "batched-gemm-sweep",
    "data-parallel-step",
    "gemm-naive-tiled-cublas",
    "one-add-two-implementations",
)


def _example_files() -> dict[str, bytes]:
    folder = resources.files(EXAMPLES_PACKAGE).joinpath(EXAMPLES_FOLDER)
    files = {}
    for item in folder.iterdir():
        if item.name.endswith(".json") and item.is_file():
            files[item.name.removesuffix(".json")] = item.read_bytes()
    return files


def _ordered_keys(keys: list[str]) -> list[str]:
    rank = {key: index for index, key in enumerate(MENU_ORDER)}
    return sorted(keys, key=lambda key: (rank.get(key, len(rank)), key))


def list_examples() -> list[tuple[str, str]]:
    """(key, title) of every built-in example, in menu order; a damaged example file is left out."""
    found = []
    files = _example_files()
    for key in _ordered_keys(list(files)):
        try:
            session = loads(files[key])
        except SessionError:
            continue
        found.append((key, session.title or key))
    return found


def load_example(key: str) -> Session:
    """A fresh Session for one example; an unknown key raises WorkbenchError."""
    files = _example_files()
    if key not in files:
        known = ", ".join(_ordered_keys(list(files)))
        raise WorkbenchError(f"unknown example '{key}'; known: {known}")
    try:
        return loads(files[key])
    except SessionError as exc:
        raise SessionError(f"example '{key}': {exc}") from None
