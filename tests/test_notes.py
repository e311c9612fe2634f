"""Checklists in Markdown notes: found in the text, ticked by rewriting one line, drawn for plain readers."""

from __future__ import annotations

import pytest

from workbench.documents.notes import as_markdown, checklist, progress, set_checked, with_boxes_drawn

NOTES = """Evidence (tick each):

- [ ] The median time.
- [x] The achieved bandwidth: 12.3 GB/s
  * [ ] nested: an output checksum
1. [X] numbered
[ ] bare, as early examples wrote it
```
- [ ] inside a code block: not a box
```
Text with [ ] in the middle is not a box."""


def test_boxes_are_found_in_order_with_their_state_and_text() -> None:
    items = checklist(NOTES)
    assert [(item.checked, item.text) for item in items] == [
        (False, "The median time."),
        (True, "The achieved bandwidth: 12.3 GB/s"),
        (False, "nested: an output checksum"),
        (True, "numbered"),
        (False, "bare, as early examples wrote it"),
    ]
    assert progress(NOTES) == (2, 5)


def test_ticking_rewrites_only_that_box() -> None:
    ticked = set_checked(NOTES, 0, True)
    assert ticked.replace("- [x] The median", "- [ ] The median", 1) == NOTES
    assert checklist(ticked)[0].checked
    cleared = set_checked(NOTES, 3, False)
    assert "1. [ ] numbered" in cleared and progress(cleared) == (1, 5)
    assert set_checked(set_checked(NOTES, 4, True), 4, False) == NOTES
    with pytest.raises(IndexError):
        set_checked(NOTES, 5, True)


def test_bare_boxes_render_as_list_items_and_plain_readers_see_glyphs() -> None:
    shown = as_markdown(NOTES)
    assert "- [ ] bare, as early examples wrote it" in shown
    assert "- [ ] inside a code block" in shown  # untouched
    drawn = with_boxes_drawn(NOTES)
    assert "- ☐ The median time." in drawn and "- ☑ The achieved" in drawn and "☐ bare" in drawn
    assert "Text with [ ] in the middle" in drawn


def test_the_markdown_report_keeps_boxes_as_boxes_and_the_rest_of_the_line_inert() -> None:
    from workbench.documents.report import render_markdown
    from workbench.documents.session import OperationEntry, Session

    notes = "- [x] median 8.7 ms ![x](http://example.invalid/a.png) <b>bold</b>\n[ ] bare box"
    markdown = render_markdown(Session(operations=[OperationEntry.automatic("add(n=2**20)", notes)]))
    assert "- [x] median 8.7 ms \\!\\[x\\](http://example.invalid/a.png) &lt;b&gt;bold&lt;/b&gt;" in markdown
    assert "- [ ] bare box" in markdown
