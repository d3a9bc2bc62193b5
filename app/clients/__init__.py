"""Thin clients of the REST API: the ``pinchtab`` command line and the MCP server (stdio)."""
