"""One way to write a share: significant figures, so 0.045 % never prints as '0.0 %' or '0 %'."""

from __future__ import annotations

import math

from workbench.measure import measure
from workbench.measure.text import run_table
from workbench.measure.runs import FigureContext, parse_run, run_figures
from workbench.model.units import format_percent


def test_a_small_share_keeps_its_significant_figures() -> None:
    assert format_percent(0.045) == "0.045 %"
    assert format_percent(0.04449) == "0.0445 %"
    assert format_percent(80.53) == "80.5 %"
    assert format_percent(100.0) == "100 %"
    assert format_percent(1234.6) == "1235 %"
    assert format_percent(0.0) == "0 %"
    assert format_percent(math.inf) == "inf %"


def test_cli_measure_writes_the_percent_of_the_bound_and_the_check_with_significant_figures() -> None:
    record = measure("add(n=2**16, dtype=fp32)", backend="numpy", iterations=30, device="cpu-generic")
    figures = run_figures(parse_run(record.to_dict(), 0), FigureContext())
    table = run_table(record, figures)
    assert figures.percent_of_bound is not None
    assert f"the median reaches {format_percent(figures.percent_of_bound)} of the bound" in table
    assert "0.0%" not in table and "0.0 %" not in table
    assert record.check is not None and "% of the allowance" in record.check.message or "none of the allowance" in record.check.message


def test_the_readme_and_the_gui_help_list_every_example_key(capsys) -> None:
    from pathlib import Path

    import pytest

    from workbench.cli import main
    from workbench.documents.examples import list_examples

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    keys = [key for key, _title in list_examples()]
    assert keys and all(f"| `{key}` |" in readme for key in keys)
    with pytest.raises(SystemExit):
        main(["gui", "--help"])
    help_text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # argparse wraps at hyphens
    assert all(key in help_text for key in keys)
