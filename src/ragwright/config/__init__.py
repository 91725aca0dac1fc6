"""One configuration for every capability (``ragwright.toml``), read by the CLI, the HTTP server and the
MCP server alike: :mod:`.settings` reads and validates it, :mod:`.overrides` maps command-line switches
onto it, :mod:`.wiring` builds a :class:`~ragwright.rag.Rag` from it, :mod:`.render` prints it."""

from ragwright.config.settings import ENV_VAR, FILE_NAME, CacheSettings, Settings, config_path, load_settings

__all__ = ["ENV_VAR", "FILE_NAME", "CacheSettings", "Settings", "config_path", "load_settings"]
