"""The read side: projector processes, DuckDB read models, listings, retrieval, the graph."""
