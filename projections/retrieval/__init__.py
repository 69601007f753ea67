"""Retrieval, the product's core.

Channels, BM25, fusion, packing into a budget, a turn's context.
"""
