"""The agent surface: the pydantic-ai toolset, and the work and words it shares with MCP."""
