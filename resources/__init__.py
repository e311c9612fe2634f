"""Data files shipped with the workbench: unit definitions, device catalogue, examples."""
