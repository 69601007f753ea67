"""The mind's domain: aggregates, their events and the application service.

Depends on nothing of ours (tests/unit/test_layers.py keeps it so).
"""
