"""The ``ragwright`` command line, one module per concern.

:mod:`~ragwright.cli.main` holds the group and the query commands (``search``, ``ask``, ``status`` …);
beside it ``ingest``, ``reindex``, ``serve``, ``worker``, ``mcp``, ``graph``, ``memory`` (``chat``) and
the tools (``eval``, ``parse``, ``quickstart``), with the shared state (``common``), the switches and
``config`` (``config``), the global options (``globals``) and the human output (``output``).
``python -m ragwright.cli`` runs it as the installed ``ragwright`` script does.
"""

from ragwright.cli.main import main

__all__ = ["main"]
