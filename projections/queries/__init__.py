"""Queries and reports over the read model: listings, threads, analytics, plots, the graph."""
