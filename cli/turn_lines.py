"""One line of text for every change a turn made, for `mind turn`, `mind chat` and `mind tick`."""

from __future__ import annotations

from collections import Counter
from typing import Any

from domain.control_lines import parse_concept, parse_relate, split_reply
from domain.text import clean_token

IDENTITY_CLAIMS = ("identity_proposal", "identity_ratify")


def change_lines(outcome: Any) -> list[str]:
    """What the reply's control lines did, in a fixed order: commitments, concepts, reflections,
    claims, the name, threads, then the refused lines with their reasons."""
    lines = [f"opened {cid}" for cid in outcome.opened]
    lines += [f"closed {cid}" for cid in outcome.closed]
    lines += _accepted_concept_lines(outcome.reply_raw, outcome.rejections)
    for claim in outcome.claims:
        if claim.get("type") not in IDENTITY_CLAIMS:
            detail = ", ".join(f"{k}={v}" for k, v in claim.items() if k != "type")
            lines.append(f"claim {claim.get('type')} accepted" + (f" ({detail})" if detail else ""))
    lines += [_identity_line(change) for change in outcome.identity]
    lines += [f"thread {note}" for note in outcome.threads]
    lines += [f"rejected {r['line']!r}: {r['reason']}" for r in outcome.rejections]
    return lines


def _accepted_concept_lines(reply_raw: str, rejections: list[dict[str, str]]) -> list[str]:
    """CONCEPT, RELATE and REFLECT lines the turn applied: the outcome lists no field for them,
    so they are the reply's lines of those kinds less the refused ones (a refusal names its
    raw line; a line given twice and refused once still applied once)."""
    refused = Counter(r["line"] for r in rejections)
    shown = []
    for line in split_reply(reply_raw)[1]:
        if refused[line.raw] > 0:
            refused[line.raw] -= 1
            continue
        if line.keyword == "CONCEPT":
            token, _ = parse_concept(line.body)
            shown.append(f"defined concept {clean_token(token)}")
        elif line.keyword == "RELATE":
            source, relation, target = parse_relate(line.body)
            shown.append(f"related {clean_token(source)} -{relation}-> {clean_token(target)}")
        elif line.keyword == "REFLECT":
            shown.append(f"reflected: {line.body}")
    return shown


def _identity_line(change: str) -> str:
    verb, _, name = change.partition(" ")
    return {"proposed": "proposed the name", "adopted": "adopted the name"}.get(verb, verb) + (
        f" {name}" if name else ""
    )
