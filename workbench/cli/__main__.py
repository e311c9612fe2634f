"""`python -m workbench.cli` runs the `workbench` command (as `python -m workbench` does)."""

import sys

from workbench.cli import main

sys.exit(main())
