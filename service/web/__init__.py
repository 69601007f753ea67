"""The web page served at `/` by `mind serve` (routes, reads and static assets)."""
