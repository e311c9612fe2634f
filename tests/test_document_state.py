"""The document and its undo history without Qt (workbench.state): edits, undo and redo, typing merged by the
clock, the clean state, the selection, the partial-rate rule, and the events views hear."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from workbench.documents.session import DeviceChoice, OperationEntry, Session
from workbench.state import Command, DocumentState, UndoStack, commands
from workbench.state.document import OperationStates

GEMM = "gemm(M=4096, N=4096, K=4096, dtype=fp16)"
ADD = "add(n=2**24, dtype=fp32)"
COPY = "copy(n=2**20, dtype=fp32)"


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def wait(self, seconds: float) -> None:
        self.now += seconds


def three_operations(clock: Callable[[], float] | None = None) -> DocumentState:
    session = Session(operations=[OperationEntry.automatic(text) for text in (GEMM, ADD, COPY)])
    return DocumentState(session) if clock is None else DocumentState(session, clock=clock)


def record(document: DocumentState) -> list[tuple[Any, ...]]:
    """Every event the document emits from now on, as (name, *arguments)."""
    heard: list[tuple[Any, ...]] = []
    for name, event in document.events().items():
        event.connect(lambda *args, name=name: heard.append((name, *args)))
    return heard


# ---------------------------------------------------------------- Qt stays out


def test_the_state_and_an_edit_leave_qt_out_of_the_process() -> None:
    probe = (
        "import sys\n"
        "from workbench.state import DocumentState\n"
        "document = DocumentState()\n"
        "document.edit_declaration(0, 'add(n=4, dtype=fp32)')\n"
        "document.undo_stack.undo()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# ---------------------------------------------------------------- edits, undo and redo


def test_an_edit_undoes_and_redoes_with_its_figures_and_events() -> None:
    document = three_operations()
    entry = document.operations[1]
    before = document.state(entry).analysis
    document.select(0)
    heard = record(document)
    document.edit_declaration(1, "add(n=2**20, dtype=fp32)")
    assert entry.declaration == "add(n=2**20, dtype=fp32)" and entry.name == "Vector add, 2^20 fp32"
    assert document.state(entry).analysis is not None and document.state(entry).analysis.flop == 2**20
    assert document.current == 1  # the edited operation is shown
    assert ("selection_changed", 1) in heard and ("declaration_changed", 1) in heard and ("analysis_changed", 1) in heard
    assert ("operations_changed",) in heard  # the automatic name followed the declaration

    stack = document.undo_stack
    assert stack.undo_text() == "Edit Vector add, 2^24 fp32"  # named as the operation was when the edit began
    assert stack.can_undo() and not stack.can_redo()
    stack.undo()
    assert entry.declaration == ADD and document.state(entry).analysis.flop == before.flop
    assert stack.can_redo() and stack.redo_text() == stack.command(0).text
    stack.redo()
    assert entry.declaration == "add(n=2**20, dtype=fp32)"


def test_an_edit_to_the_same_text_is_no_step() -> None:
    document = three_operations()
    document.edit_declaration(0, GEMM)
    assert document.undo_stack.count() == 0


def test_a_fault_keeps_the_last_valid_analysis_and_says_so() -> None:
    document = three_operations()
    entry = document.operations[0]
    valid = document.state(entry).analysis
    document.edit_declaration(0, "gemm(M=0, N=4096, K=4096, dtype=fp16)")
    state = document.state(entry)
    assert state.error is not None and state.analysis is valid and state.stale
    document.undo_stack.undo()
    assert document.state(entry).error is None and not document.state(entry).stale


def test_add_duplicate_rename_move_remove_each_one_step() -> None:
    document = three_operations()
    document.add_operation()
    assert len(document.operations) == 4 and document.current == 3
    document.rename_operation(0, "mine")
    document.duplicate_operation(0)
    assert [e.name for e in document.operations[:2]] == ["mine", "mine (copy)"] and document.current == 1
    document.move_operation(1, 3)
    assert document.operations[3].name == "mine (copy)" and document.current == 3
    document.rename_operation(0, "")  # automatic again
    assert document.operations[0].name_automatic
    stack = document.undo_stack
    assert [stack.command(i).text for i in range(stack.count())] == [
        "Add GEMM 4096³ fp16", "Rename GEMM 4096³ fp16 to mine", "Duplicate mine", "Move mine (copy)",
        "Rename mine to the automatic name",
    ]
    while stack.can_undo():
        stack.undo()
    assert [e.declaration for e in document.operations] == [GEMM, ADD, COPY]
    assert [e.name_automatic for e in document.operations] == [True, True, True]


def test_settings_device_and_rates_are_steps_and_recompute() -> None:
    document = three_operations()
    entry = document.operations[0]
    heard = record(document)
    document.set_setting("convention", "mac")
    assert document.state(entry).analysis.flop == 4096**3
    assert ("settings_changed",) in heard and ("analysis_changed", -1) in heard
    document.set_device("v100-sxm2")
    assert document.device is not None and "V100" in document.device.name
    document.set_rate("hbm", "1000 GB/s")
    assert document.session.device.overrides["hbm"].value == 1e12
    document.set_device("h100-sxm")  # entered rates belonged to the V100
    assert document.session.device.overrides == {}
    stack = document.undo_stack
    stack.undo()
    assert document.session.device.key == "v100-sxm2" and document.session.device.overrides["hbm"].value == 1e12
    document.reset_rates()
    assert document.session.device.overrides == {} and stack.undo_text() == "Reset all rates"
    while stack.can_undo():
        stack.undo()
    assert document.session.settings.convention != "mac" and document.session.device.key != "v100-sxm2"


# ---------------------------------------------------------------- the one partial-rate rule


def test_an_fp8_gemm_on_a_v100_keeps_its_work_and_bytes_and_says_why_there_is_no_bound() -> None:
    document = three_operations()
    document.set_device("v100-sxm2")
    document.edit_declaration(0, "gemm(M=4096, N=4096, K=4096, dtype=fp8)")
    state = document.state(document.operations[0])
    assert state.error is None and state.analysis is not None
    assert (state.analysis.flop, state.analysis.bytes) == (137_438_953_472, 50_331_648)
    assert state.analysis.bound_time is None
    assert "NVIDIA Tesla V100 SXM2 has no rate for the fp8_tc path" in state.notice
    assert document.state(document.operations[1]).notice == ""  # an fp32 add has its rates on a V100


def test_an_unresolvable_device_leaves_figures_without_it_and_a_notice() -> None:
    session = Session(operations=[OperationEntry.automatic(ADD)])
    session.device = DeviceChoice("nvml-3")
    document = DocumentState(session)
    state = document.state(document.operations[0])
    assert document.device is None and state.analysis is not None and state.analysis.flop == 2**24
    assert state.notice == "nvml-3 is a detected GPU; it is not detected on this machine yet" == document.device_error


# ---------------------------------------------------------------- typing merged by the clock


def test_typing_within_the_pause_is_one_step_and_a_pause_starts_another() -> None:
    clock = Clock()
    document = three_operations(clock)
    stack = document.undo_stack
    for n in ("2**2", "2**21", "2**22"):
        document.edit_declaration(1, f"add(n={n}, dtype=fp32)", typed=True)
        clock.wait(commands.MERGE_PAUSE_S)  # exactly the pause still merges
    assert stack.count() == 1
    clock.wait(0.01)  # now longer than the pause since the last keystroke
    document.edit_declaration(1, "add(n=2**23, dtype=fp32)")
    assert stack.count() == 2
    stack.undo()
    assert document.operations[1].declaration == "add(n=2**22, dtype=fp32)"
    stack.undo()
    assert document.operations[1].declaration == ADD


def test_typing_merges_only_from_one_place_into_one_operation() -> None:
    document = three_operations(Clock())
    document.edit_declaration(1, "add(n=2**20, dtype=fp32)", source="line")
    document.edit_declaration(1, "add(n=2**21, dtype=fp32)", source="field:n")
    document.edit_declaration(2, "copy(n=2**21, dtype=fp32)", source="field:n")
    assert document.undo_stack.count() == 3


def test_typing_back_to_where_it_began_leaves_no_step() -> None:
    document = three_operations(Clock())
    stack = document.undo_stack
    document.edit_declaration(1, "add(n=2**2, dtype=fp32)")
    assert not stack.is_clean()
    document.edit_declaration(1, ADD)  # merged, and the merged step changes nothing: dropped
    assert stack.count() == 0 and stack.is_clean() and not stack.can_undo()


def test_a_keystroke_after_a_save_is_a_new_step() -> None:
    document = three_operations(Clock())
    stack = document.undo_stack
    document.edit_declaration(1, "add(n=2**2, dtype=fp32)")
    stack.set_clean()
    document.edit_declaration(1, "add(n=2**21, dtype=fp32)")
    assert stack.count() == 2
    stack.undo()
    assert stack.is_clean() and document.operations[1].declaration == "add(n=2**2, dtype=fp32)"


def test_notes_typing_merges_but_each_ticked_box_is_a_step() -> None:
    document = three_operations(Clock())
    document.set_notes(0, "- [ ] one")
    document.set_notes(0, "- [ ] one\n- [ ] two")
    assert document.undo_stack.count() == 1
    document.set_checked(0, 0, True)
    document.set_checked(0, 1, True)
    assert document.operations[0].notes == "- [x] one\n- [x] two"
    assert document.undo_stack.count() == 3 and document.undo_stack.undo_text().startswith("Tick a box")
    document.set_notes(-1, "the session")
    assert document.session.description == "the session"
    document.undo_stack.undo()
    assert document.session.description == ""


def test_the_step_text_is_an_undoable_edit_that_merges_while_typing() -> None:
    clock = Clock()
    document = three_operations(clock)
    heard = record(document)
    document.set_step_text("a = add(n=4, dtype=fp32)")
    document.set_step_text("a = add(n=8, dtype=fp32)")
    assert document.undo_stack.count() == 1 and document.step_text == "a = add(n=8, dtype=fp32)"
    assert heard.count(("step_changed",)) == 2
    clock.wait(commands.MERGE_PAUSE_S + 1)
    document.set_step_text("a = add(n=16, dtype=fp32)")
    assert document.undo_stack.count() == 2
    document.undo_stack.undo()
    document.undo_stack.undo()
    assert document.step_text is None and document.session.steps == []  # undo took the step away again
    document.undo_stack.redo()
    assert document.session.steps[0].name == "step" and document.step_text == "a = add(n=8, dtype=fp32)"


# ---------------------------------------------------------------- the clean state


def test_clean_follows_the_saved_state_through_undo_and_redo() -> None:
    document = three_operations(Clock())
    stack = document.undo_stack
    changes: list[bool] = []
    stack.clean_changed.connect(changes.append)
    assert stack.is_clean()
    document.remove_operation(2)
    document.add_operation()
    assert not stack.is_clean() and changes == [False]
    stack.set_clean()  # saved here
    assert changes == [False, True]
    stack.undo()
    assert not stack.is_clean()
    stack.redo()
    assert stack.is_clean() and changes == [False, True, False, True]
    stack.undo()
    stack.undo()
    document.add_operation()  # the saved state was among the steps dropped: unreachable now
    assert stack.clean_index is None and not stack.is_clean()
    stack.undo()
    assert not stack.is_clean()


def test_reset_clean_keeps_unsaved_work_unsaved_and_replacing_the_session_starts_afresh() -> None:
    document = three_operations()
    stack = document.undo_stack
    stack.reset_clean()
    assert not stack.is_clean()
    document.add_operation()
    stack.undo()
    assert not stack.is_clean()  # no state in the history is what the file holds
    document.replace_session(Session(operations=[OperationEntry.automatic(ADD)]), path="x.json")
    assert stack.count() == 0 and stack.is_clean() and document.path is not None and document.path.endswith("x.json")


def test_take_from_file_clears_the_history_but_keeps_unsaved_work_unsaved() -> None:
    document = three_operations()
    document.add_operation()
    merged = Session(operations=[OperationEntry.automatic(ADD)])
    document.take_from_file(merged)
    stack = document.undo_stack
    assert stack.count() == 0 and not stack.is_clean() and document.current == 0
    assert document.state(merged.operations[0]).analysis is not None


# ---------------------------------------------------------------- the selection


def test_removing_the_selected_operation_selects_its_neighbour_and_undo_brings_it_back() -> None:
    document = three_operations()
    document.select(2)
    last = document.operations[2]
    state = document.state(last)
    heard = record(document)
    document.remove_operation(2)
    assert document.current == 1 and [e.declaration for e in document.operations] == [GEMM, ADD]
    assert heard == [("operations_changed",), ("selection_changed", 1), ("analysis_changed", -1)]
    document.select(0)
    document.remove_operation(0)
    assert document.current == 0 and document.current_entry is not None and document.current_entry.declaration == ADD
    document.remove_operation(0)
    assert document.current == -1 and document.current_entry is None
    stack = document.undo_stack
    stack.undo()
    stack.undo()
    stack.undo()
    assert document.operations[2] is last and document.current == 2
    assert document.state(last) is state and state.analysis is not None  # its state came back with it


def test_a_selection_is_no_step_and_an_index_outside_the_list_selects_nothing() -> None:
    document = three_operations()
    heard = record(document)
    document.select(1)
    document.select(1)
    document.select(7)
    assert heard == [("selection_changed", 1), ("selection_changed", -1)] and document.undo_stack.count() == 0


# ---------------------------------------------------------------- runs and profiles


def test_runs_and_profiles_are_undoable() -> None:
    document = three_operations()
    heard = record(document)
    run = {"declaration": ADD}
    document.add_run(run, "Measure add")
    document.add_profile({"source": "a.csv"})
    document.add_profile({"source": "b.csv"})
    first = document.session.profiles[0]
    document.replace_profile(first, {"source": "a.csv", "matches": []})
    document.remove_profile(1)
    document.remove_run(0)
    assert document.session.runs == [] and document.session.profiles == [{"source": "a.csv", "matches": []}]
    stack = document.undo_stack
    assert stack.undo_text() == "Remove run of " + ADD
    stack.undo()
    stack.undo()
    assert document.session.runs[0] is run and document.session.profiles[1] == {"source": "b.csv"}
    stack.undo()
    assert document.session.profiles[0] is first
    while stack.can_undo():
        stack.undo()
    assert document.session.runs == [] and document.session.profiles == []
    assert ("runs_changed",) in heard and ("profiles_changed",) in heard


# ---------------------------------------------------------------- one change, one redraw


def test_a_view_asking_after_each_event_of_one_change_redraws_once() -> None:
    document = three_operations()
    redraws: list[int] = []

    def redraw() -> None:
        redraws.append(document.current)

    for event in document.events().values():
        event.connect(lambda *_: document.after_changes(redraw))
    document.edit_declaration(2, "copy(n=2**21, dtype=fp32)")  # selection, names, declaration, analysis
    assert redraws == [2]
    document.after_changes(redraw)  # no change under way: at once
    assert redraws == [2, 2]


# ---------------------------------------------------------------- each operation's state


def test_an_operation_s_state_goes_with_the_entry_and_never_to_a_newer_one() -> None:
    states = OperationStates()
    entry = OperationEntry.automatic(ADD)
    twin = OperationEntry.automatic(ADD)  # equal, yet another operation
    assert states.get(entry) is states.get(entry) and states.get(entry) is not states.get(twin)
    assert len(states) == 2
    del entry
    gc.collect()
    assert len(states) == 1


# ---------------------------------------------------------------- the plain stack on its own


class Append(Command):
    """Append `item` to `items`; merges with the next one of its id when `merging`."""

    def __init__(self, items: list[str], item: str, merging: bool = False) -> None:
        super().__init__(f"Append {item}")
        self.items, self.item, self.merging = items, item, merging

    def id(self) -> int:
        return 7 if self.merging else super().id()

    def merge_with(self, other: Command) -> bool:
        assert isinstance(other, Append)
        self.item += other.item
        self.text = f"Append {self.item}"
        self.items.pop()
        self.items[-1] = self.item
        return True

    def redo(self) -> None:
        self.items.append(self.item)

    def undo(self) -> None:
        self.items.remove(self.item)


def test_the_stack_counts_names_and_drops_what_can_no_longer_be_redone() -> None:
    items: list[str] = []
    stack = UndoStack()
    indexes: list[int] = []
    stack.index_changed.connect(indexes.append)
    assert (stack.count(), stack.index, stack.can_undo(), stack.can_redo(), stack.undo_text()) == (0, 0, False, False, "")
    stack.push(Append(items, "a"))
    stack.push(Append(items, "b"))
    stack.undo()
    assert items == ["a"] and stack.redo_text() == "Append b" and stack.undo_text() == "Append a"
    stack.push(Append(items, "c"))
    assert items == ["a", "c"] and stack.count() == 2 and not stack.can_redo()
    stack.push(Append(items, "d", merging=True))
    stack.push(Append(items, "e", merging=True))
    assert items == ["a", "c", "de"] and stack.count() == 3 and stack.undo_text() == "Append de"
    assert indexes == [1, 2, 1, 2, 3, 3]  # the merge says so too: the step it extends was renamed
    stack.undo()
    stack.redo()
    stack.redo()  # nothing to redo
    assert items == ["a", "c", "de"] and stack.index == 3
    stack.clear()
    assert stack.count() == 0 and stack.is_clean() and items == ["a", "c", "de"]


def test_an_obsolete_command_is_not_kept() -> None:
    stack = UndoStack()
    done: list[str] = []

    class Once(Command):
        def redo(self) -> None:
            done.append("redo")

        def undo(self) -> None:
            done.append("undo")
            self.obsolete = True  # nothing left to redo

    obsolete = Once("nothing")
    obsolete.obsolete = True
    stack.push(obsolete)
    assert stack.count() == 0 and done == []
    stack.push(Once("once"))
    stack.set_clean()
    stack.undo()
    assert stack.count() == 0 and done == ["redo", "undo"]
    assert not stack.is_clean()  # the clean state was past it


def test_a_command_must_say_how_to_redo_and_undo() -> None:
    with pytest.raises(NotImplementedError):
        UndoStack().push(Command("nothing"))
