"""The model: what an operation is and what it costs, with no files, documents or screens.

Units and dtypes, the declaration language, the operations and their
implementations, the devices and their rates, and the analysis that turns an
operation on a device into its work, its traffic and its time bounds. Layers
inside it are in pyproject.toml (the `model` contract).
"""
