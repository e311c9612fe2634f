"""Documents: what a user opens, saves, shares and exports.

The session (its model and file format), the lock and merge around every
write, crash recovery, the bundled examples, reports, notes, the comparison
of operations across devices, and a step read from a step or session file.
Layers inside it are in pyproject.toml (the `documents` contract).
"""
