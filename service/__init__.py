"""The mind as a service: `mind serve` (HTTP JSON API over TCP and the home's Unix socket)."""
