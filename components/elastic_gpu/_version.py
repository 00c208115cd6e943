"""The package version, in one place (read by pyproject.toml and `elastic_gpu.__version__`)."""

__version__ = "0.2.0"
