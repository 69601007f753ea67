"""The environment this process started with, copied when `mind` starts (`cli.main.main`
imports this module before anything else): later, the home's .env lines are put into
os.environ, and importing LiteLLM changes it too, but a server fingerprints the environment its
clients started with (`server_files.env_fingerprint`). Standard library only: `mind --help`
pays for this import."""

from __future__ import annotations

import os

ENVIRONMENT: dict[str, str] = dict(os.environ)
