"""mindledger: a persistent, inspectable mind for language-model agents.

The installed distribution adds this one name; the repository's top-level folders (`domain/`,
`projections/`, `adapters/`, `cli/`, `service/`) are its subpackages (symlinked here, see
docs/decisions/0100-one-name-in-site-packages.md).
"""
