"""Notes given to a Markdown renderer (issue 33): `*` inside a word is written, never emphasis; code is left alone."""

from __future__ import annotations

import pytest

from workbench.documents.notes import for_rendering


@pytest.mark.parametrize(
    ("note", "given"),
    [
        ("2**27 BF16 … 2**28 FP32", r"2\*\*27 BF16 … 2\*\*28 FP32"),
        ("axpy(n=2**28, dtype=fp32)", r"axpy(n=2\*\*28, dtype=fp32)"),
        ("flop = 2*M*N*K", r"flop = 2\*M\*N\*K"),
        ("**bold** and *slanted*", "**bold** and *slanted*"),  # emphasis beside spaces stays emphasis
        ("`2**27` but 2**27", r"`2**27` but 2\*\*27"),  # a code span is shown as written by Markdown itself
        ("``a ` b**c`` d**e", r"``a ` b**c`` d\*\*e"),
        ("an `unclosed 2**3", r"an `unclosed 2\*\*3"),
        ("- [ ] n=2**24\n[x] bare box 2**2", "- [ ] n=2\\*\\*24\n- [x] bare box 2\\*\\*2"),
        ("```\nM**2\n```\nM**2", "```\nM**2\n```\nM\\*\\*2"),
        ("text\n\n    code 2**3\n\nafter 2**3", "text\n\n    code 2**3\n\nafter 2\\*\\*3"),
        ("- item\n\n    more of the item 2**3", "- item\n\n    more of the item 2\\*\\*3"),
        ("x_**2", "x_**2"),  # `_` is not a letter here: the rule is letters and digits
    ],
)
def test_stars_inside_a_word_are_written(note: str, given: str) -> None:
    assert for_rendering(note) == given


def test_a_note_without_stars_in_words_is_given_as_written() -> None:
    note = "# Title\n\n- [x] done\n1. first *one*\n\n> quoted **strong**"
    assert for_rendering(note) == note
