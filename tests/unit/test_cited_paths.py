"""Every path a tracked file cites is in the repository (docs, comments and help point at real
files), and nothing cites the notes that live outside it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FOLDERS = "domain|projections|adapters|cli|service|mindledger|docs|bench|tests|scripts|\\.ci"
CITED = re.compile(
    rf"(?<![\w./-])(?:{FOLDERS})/[\w./-]*\w\.(?:py|md|sh|json|toml|js|css|html|png)\b"
)
LINK = re.compile(r"\]\((?!https?:|mailto:|#)([^)#\s]+)")
OUTSIDE = re.compile(r"\b(?:FACTS|DESIGN|STYLE)\.md\b")


SUFFIXES = (".py", ".md", ".toml", ".sh", ".js", "Makefile")
UNTRACKED = {".git", ".venv", "build", "__pycache__", ".mypy_cache", ".ruff_cache", ".hypothesis"}


def tracked() -> list[Path]:
    """The repository's files (git's list; in a copy without .git, every file but caches)."""
    listed = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if listed.returncode == 0:
        return [REPO / n for n in listed.stdout.split() if n.endswith(SUFFIXES)]
    return [
        p
        for p in REPO.rglob("*")
        if p.name.endswith(SUFFIXES)
        and not UNTRACKED & set(p.relative_to(REPO).parts)
        and p.relative_to(REPO).parts[0] != "mindledger"  # the folders again, linked
        and ".egg-info" not in str(p)
    ]


def test_every_cited_path_exists() -> None:
    missing = []
    for path in tracked():
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        for cited in CITED.findall(text):
            if not (REPO / cited).exists() and not cited.startswith("bench/out/"):  # written
                missing.append(f"{path.relative_to(REPO)}: {cited}")
        if path.suffix == ".md":
            for link in LINK.findall(text):
                if not (path.parent / link).exists():
                    missing.append(f"{path.relative_to(REPO)}: ({link})")

    assert missing == []


def test_nothing_cites_notes_kept_outside_the_repository() -> None:
    citing = [
        str(p.relative_to(REPO))
        for p in tracked()
        if p.is_file()
        and p.name != "test_cited_paths.py"
        and OUTSIDE.search(p.read_text(errors="replace"))
    ]

    assert citing == []
