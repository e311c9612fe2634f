"""Why the tests that need PyTorch (or transformers) skip without it, said once for all of them.

`make test` installs neither (the public package index's default Linux PyTorch wheel is the CUDA build, several GB);
`make test TORCH=1`, as CI runs it, installs both (pyproject.toml's test-torch extra)."""

from __future__ import annotations

TORCH_MISSING = "PyTorch is not installed: `make test TORCH=1` installs it (the test-torch extra; README, Tests and PyTorch)"
TRANSFORMERS_MISSING = "transformers is not installed: `make test TORCH=1` installs it (the test-torch extra)"
