"""The one place the depthsep version is written (pyproject reads it: ``[tool.setuptools.dynamic]``).

Every package re-exports it as ``__version__``; the version of an installed copy can also be read
with ``importlib.metadata.version("depthsep")``.
"""

__version__ = "0.1.0"
