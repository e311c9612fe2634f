"""The bounded reader: regular files only, a size limit checked before and while reading, never a hang."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from workbench.files import FileReadError, describe_size, read_bounded


def test_reads_a_regular_file(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_bytes(b"x" * 1000)
    assert read_bounded(target, 1000) == b"x" * 1000


def test_one_byte_over_the_limit_names_both_sizes(tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    target.write_bytes(b"x" * (2**20 + 1))
    with pytest.raises(FileReadError, match=r"1,048,577 B \(1 MiB \+ 1 B\) is over the limit of 1,048,576 B \(1 MiB\) for a file"):
        read_bounded(target, 2**20)


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    started = time.perf_counter()
    with pytest.raises(FileReadError, match="named pipe"):
        read_bounded(fifo, 100)
    assert time.perf_counter() - started < 1.0


def test_device_behind_a_link_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "z.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(FileReadError, match="a device"):
        read_bounded(link, 100)


def test_folder_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileReadError, match="a folder"):
        read_bounded(tmp_path, 100)
    with pytest.raises(FileReadError, match="no such file"):
        read_bounded(tmp_path / "absent.json", 100)


def test_size_descriptions() -> None:
    assert describe_size(512) == "512 B"
    assert describe_size(64 * 2**20) == "67,108,864 B (64 MiB)"
    assert describe_size(3 * 2**30 + 2**29) == "3,758,096,384 B (3.5 GiB)"
