"""One line of text for every change a turn made, for `mind turn`, `mind chat` and `mind tick`.

Works on a turn as `mind turn --json` prints it, so the fast path (`cli.fast_path`) prints a turn
a server ran with the same code as the in-process command; `effects_of` makes one from an
outcome. Standard library and `domain` only (it is imported before the fast path decides)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

IDENTITY_CLAIMS = ("identity_proposal", "identity_ratify")


def effects_of(outcome: Any) -> dict[str, Any]:
    """The fields of a turn's JSON that `change_lines` and `effect_lines` read, from an outcome."""
    return {
        "opened": outcome.opened,
        "closed": outcome.closed,
        "reply_raw": outcome.reply_raw,
        "claims": outcome.claims,
        "rejections": outcome.rejections,
        "identity": {"changes": outcome.identity},
        "threads": outcome.threads,
        "cut_off": outcome.cut_off,
        "finish_reason": outcome.finish_reason,
    }


def effect_lines(turn: Mapping[str, Any]) -> list[str]:
    """What a turn prints after its reply (on stderr, so the reply itself stays clean): a note
    when the reply was cut off at the token limit, then one line per change."""
    lines = []
    if turn["cut_off"]:
        lines.append(
            f"  [cut off at the token limit (finish reason {turn['finish_reason']}); "
            "the reply is kept as far as it got]"
        )
    return lines + [f"  [{line}]" for line in change_lines(turn)]


def change_lines(turn: Mapping[str, Any]) -> list[str]:
    """What the reply's control lines did, in a fixed order: commitments, concepts, reflections,
    claims, the name, threads, then the refused lines with their reasons."""
    lines = [f"opened {cid}" for cid in turn["opened"]]
    lines += [f"closed {cid}" for cid in turn["closed"]]
    lines += _accepted_concept_lines(turn["reply_raw"], turn["rejections"])
    for claim in turn["claims"]:
        if claim.get("type") not in IDENTITY_CLAIMS:
            detail = ", ".join(f"{k}={v}" for k, v in claim.items() if k != "type")
            lines.append(f"claim {claim.get('type')} accepted" + (f" ({detail})" if detail else ""))
    lines += [_identity_line(change) for change in turn["identity"]["changes"]]
    lines += [f"thread {note}" for note in turn["threads"]]
    lines += [f"rejected {r['line']!r}: {r['reason']}" for r in turn["rejections"]]
    return lines


def _accepted_concept_lines(reply_raw: str, rejections: list[dict[str, str]]) -> list[str]:
    """CONCEPT, RELATE and REFLECT lines the turn applied: the outcome lists no field for them,
    so they are the reply's lines of those kinds less the refused ones (a refusal names its
    raw line; a line given twice and refused once still applied once)."""
    if not any(k in reply_raw for k in ("CONCEPT", "RELATE", "REFLECT")):
        return []  # no such line (keywords are upper case): the parser's import spared
    from mindledger.domain.control_lines import parse_concept, parse_relate, split_reply
    from mindledger.domain.text import clean_token

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
