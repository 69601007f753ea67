"""The projection engine and the read-model store.

Tables, handlers, the projector, its files and locks, the follower, replay.
"""
