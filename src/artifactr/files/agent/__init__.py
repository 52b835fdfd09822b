"""The agent surface: the pydantic-ai toolset, and the work and words it shares with MCP.

:mod:`~artifactr.files.agent.tools` (``native_file_tools``) is the only module of the package
that imports pydantic-ai and ``artifactr.agent``; :mod:`~artifactr.files.agent.operations` does the
tools' work and :mod:`~artifactr.files.agent.wording` holds every word an agent reads, for the
toolset and for :mod:`artifactr.files.mcp` alike.
"""
