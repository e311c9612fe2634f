"""The desktop entry, the AppStream metadata and the icon are valid where the validators exist."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESKTOP = ROOT / "packaging" / "org.perfworkbench.Workbench.desktop"
METAINFO = ROOT / "packaging" / "org.perfworkbench.Workbench.metainfo.xml"
ICON = ROOT / "resources" / "icons" / "perf-workbench.svg"


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils not installed")
def test_desktop_entry_validates() -> None:
    result = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "error" not in result.stdout.lower()


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream not installed")
def test_metainfo_validates() -> None:
    result = subprocess.run(["appstreamcli", "validate", "--no-net", str(METAINFO)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_metainfo_launches_the_desktop_entry_and_names_the_version() -> None:
    from workbench import __version__

    root = ElementTree.parse(METAINFO).getroot()
    assert root.findtext("launchable") == DESKTOP.name
    assert root.find("releases/release").get("version") == __version__
    entry = dict(line.split("=", 1) for line in DESKTOP.read_text().splitlines() if "=" in line)
    assert entry["Icon"] == root.findtext("id")
    assert entry["Exec"].split()[0] == "perf-workbench"


def test_icon_is_svg_and_ships_in_the_package() -> None:
    root = ElementTree.parse(ICON).getroot()
    assert root.tag.endswith("svg") and root.get("viewBox") == "0 0 256 256"
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"workbench.resources.icons" = ["*.svg"]' in pyproject and '"workbench.resources" = "resources"' in pyproject
