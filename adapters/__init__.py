"""Adapters: the event store glue, the model boundary, importers. Depend inward on `domain`."""
