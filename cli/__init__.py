"""The `mind` command: click commands and the one composition root (`cli/compose.py`)."""
