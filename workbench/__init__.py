"""Performance Workbench: logical work, compulsory bytes and time bounds for tensor operations."""

__version__ = "0.1.0"
