"""File ▸ Import PyTorch model…: the dialog traces off the GUI thread, shows faults inline, and the step opens in
the Timeline as one undoable edit."""

from __future__ import annotations

import os

import pytest

from needs_torch import TORCH_MISSING  # noqa: E402

pytest.importorskip("torch", reason=TORCH_MISSING)

from workbench.gui.torch_import import OTHER_CONFIG, TorchImportDialog  # noqa: E402

MODELS = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "torch_models.py")


def open_dialog(window) -> TorchImportDialog:  # type: ignore[no-untyped-def]
    window.actions["import_torch"].trigger()
    dialog = window.findChild(TorchImportDialog)
    assert dialog is not None and dialog.isVisible()
    return dialog


def test_menu_entry_is_in_the_file_menu(window) -> None:  # type: ignore[no-untyped-def]
    file_menu = window.menuBar().actions()[0].menu()
    assert window.actions["import_torch"] in file_menu.actions()
    assert window.actions["import_torch"].text() == "Import PyTorch &model…"


def test_python_file_traced_opens_in_the_timeline_and_undoes(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    before = [step.text for step in window.document.session.steps]
    dialog = open_dialog(window)
    dialog.from_python.setChecked(True)
    dialog.python_path.setText(MODELS)
    dialog.function.setText("mlp")
    dialog.backward.setChecked(True)
    dialog.ranks.setValue(4)
    dialog.import_button.click()
    assert not dialog.import_button.isEnabled()  # tracing in the worker: the window stays responsive
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=120_000)
    view = window.timeline
    assert window.tabs.currentWidget() is view
    text = window.document.session.steps[0].text
    assert text.startswith("# Traced from torch_models.py:mlp(): forward + backward + data-parallel on 4 ranks")
    assert "up.addmm = gemm(M=32, N=256, K=64, dtype=fp32)" in text and "on comm" in text
    assert view.editor.toPlainText() == text
    qtbot.waitUntil(lambda: view.timeline is not None and "up.addmm" in view.timeline.plan.names(), timeout=30_000)
    assert not view.error.isVisible()
    window.document.undo_stack.undo()
    assert [step.text for step in window.document.session.steps] == before


def test_bad_input_is_shown_inline_and_the_dialog_stays(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(window)
    dialog.from_python.setChecked(True)
    dialog.python_path.setText(MODELS)
    dialog.function.setText("broken")
    dialog.import_button.click()
    qtbot.waitUntil(lambda: dialog.error.isVisible(), timeout=60_000)
    assert "broken() failed: ValueError: this builder fails on purpose" in dialog.error.text()
    assert dialog.isVisible() and dialog.import_button.isEnabled()
    assert dialog.function.text() == "broken"  # nothing typed is lost
    dialog.from_config.setChecked(True)
    dialog.config.setCurrentIndex(dialog.config.findData(OTHER_CONFIG))
    dialog.config_path.setText("")
    dialog.import_button.click()
    assert dialog.error.text() == "choose a config file (a Hugging Face config.json)"
    dialog.python_path.setText("/no/such/model.py")
    dialog.from_python.setChecked(True)
    dialog.import_button.click()
    qtbot.waitUntil(lambda: "no Python file at /no/such/model.py" in dialog.error.text(), timeout=60_000)
    dialog.reject()
    assert not window.document.session.steps or not window.document.session.steps[0].text.startswith("# Traced")


def test_shipped_configs_are_offered(window) -> None:  # type: ignore[no-untyped-def]
    dialog = open_dialog(window)
    keys = [dialog.config.itemData(i) for i in range(dialog.config.count())]
    assert keys == ["gpt2-small", "llama-1b", "llama-8b", OTHER_CONFIG]
    dialog.reject()
