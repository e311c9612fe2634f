"""Saved profile records are parsed once per record object (documents/profiles.py): the cache holds each record it
keeps, so a record made after another is freed, often at the freed one's address (its id), is read as itself."""

from __future__ import annotations

import gc
from pathlib import Path

from workbench.documents.profiles import read_record
from workbench.profilers.reader import read_profile

DATA = Path(__file__).resolve().parent.parent / "data"


def test_a_record_made_where_a_freed_one_was_is_read_as_itself() -> None:
    ncu = read_profile(DATA / "ncu_details.csv").to_dict()
    nsys = read_profile(DATA / "nsys_cuda_gpu_kern_sum.csv").to_dict()
    for _ in range(20):
        first = dict(ncu)  # a record of its own, read, then freed
        assert read_record(0, first).profile.tool == "ncu"
        del first
        gc.collect()
        second = dict(nsys)  # CPython often gives it the freed dict's block, and with it the freed dict's id
        read = read_record(1, second)
        assert read.profile is not None and read.profile.tool == "nsys" and read.index == 1


def test_a_record_read_again_is_not_parsed_again() -> None:
    record = read_profile(DATA / "nsys_cuda_gpu_kern_sum.csv").to_dict()
    first, again = read_record(0, record), read_record(3, record)
    assert again.profile is first.profile and again.kernels is first.kernels and again.index == 3
    broken = {"tool": "nsys"}
    assert read_record(0, broken).profile is None and read_record(0, broken).error
