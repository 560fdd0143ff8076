"""cachetui: a terminal explorer for Spack binary build caches."""

__version__ = "0.1.0"
