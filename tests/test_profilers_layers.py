"""The layers inside workbench.profilers: each module imports only the ones below it.

Lowest first: the error type; number formats and a file's lines; the CSV table reader and the
profilers' unit words; kernel names and match rules; the data records
(records.py, which imports nothing above it); the counters read from those
records; kernels grouped from them; `Profile`, the imported file with its
kernels; the readers that make one (ncu, nsys, and `reader` choosing
between them); matching kernels to operations; the trace readers (the Trace in
trace_intervals, the nsys readers trace_sqlite and trace_csv*, `trace` which
gathers them, torch_trace, and `trace_reader` choosing among them); and the layers that
explain and print (symptoms, causes, kernel_compare, render). Every import counts, those inside functions
and under TYPE_CHECKING too, as an import-linter contract would see them.
A module not placed here (a new reader, say) may import any placed one, and
no placed one may import it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workbench" / "profilers"

# Lowest first; modules in one tuple are independent (neither imports the other).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "float_texts"),
    ("numbers", "lines"),
    ("table", "metric_units"),
    ("names", "stopping"),
    ("records",),
    ("counters",),
    ("kernels",),
    ("profile",),
    ("ncu", "nsys"),
    ("reader",),
    ("matching",),
    ("trace_intervals",),
    ("trace_sqlite", "trace_csv_columns"),
    ("trace_csv_fast",),
    ("trace_csv",),
    ("trace",),
    ("torch_trace",),
    ("trace_reader",),
    ("symptoms", "causes"),
    ("kernel_compare",),
    ("render",),
)
RANK = {module: rank for rank, names in enumerate(LAYERS) for module in names}


def sibling_imports(path: Path) -> set[str]:
    """The workbench.profilers modules a source file imports, anywhere in it."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("workbench.profilers."):
                found.add(node.module.split(".")[2])
            elif node.module == "workbench.profilers":
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(
                alias.name.split(".")[2] for alias in node.names if alias.name.startswith("workbench.profilers.")
            )
    return found


def test_every_module_of_the_package_is_placed_or_new() -> None:
    modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    assert set(RANK) <= modules, f"placed but gone: {set(RANK) - modules}"


@pytest.mark.parametrize("module", sorted(RANK))
def test_a_module_imports_only_the_layers_below_it(module: str) -> None:
    own = RANK[module]
    package_modules = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    for imported in sibling_imports(PACKAGE / f"{module}.py") & package_modules:
        assert imported in RANK, f"{module} imports {imported}, which is not placed in the layers (so above all)"
        assert RANK[imported] < own, f"{module} (layer {own}) imports {imported} (layer {RANK[imported]})"


def test_the_check_sees_an_upward_import_inside_a_function(tmp_path: Path) -> None:
    """The scan finds the kind of import the data layer used to hide in a method."""
    planted = tmp_path / "records.py"
    planted.write_text(
        "def to_dict():\n    from workbench.profilers.counters import is_used_metric\n    return is_used_metric\n",
        encoding="utf-8",
    )
    assert "counters" in sibling_imports(planted)
    assert RANK["counters"] > RANK["records"]
