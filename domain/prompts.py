"""What a model is sent: the system message (who the mind is, the control-line protocol, the
delimited memory) and the messages of a turn, full for a hosted model, compact for a small one."""

from __future__ import annotations

from typing import Any

from mindledger.domain.client_chat import ClientChat, client_block
from mindledger.domain.context_port import AssembledContext
from mindledger.domain.identity import Identity
from mindledger.domain.prompt_text import one_line
from mindledger.domain.tool_use import tool_message

PROTOCOL = "\n".join(
    [
        "You may change your own state by adding control lines, each alone on a line:",
        "COMMIT: <text>                    promise to do something",
        "CLOSE: <cid> [reason]             a promise is kept or dropped",
        'CLAIM:<type>={json}               types: event_exists {"id": N}, commitment_status '
        '{"cid": C, "open": true|false}, identity_proposal {"name": N}, identity_ratify '
        '{"name": N}; add "evidence": [N, ...] to cite memory items by their # number',
        "CONCEPT: <token> = <definition>   define a concept such as user.name",
        "RELATE: <a> -> <relation> -> <b>  relate two defined concepts",
        "REFLECT: <text>                   a note to yourself",
        "REMEMBER: <question> = <answer>   keep an answer (unverified until the owner checks it)",
        'THREAD: {"label": L, "content": C}  open a thread: a question to come back to',
        'THREAD-WORK: <id> {"file": path} | {"commitment": cid} | {"tool": name}  credit work',
        'THREAD-RESOLVE: <id> {"verdict": answered|superseded|dissolved|abandoned, '
        '"artifact"|"reason": ..., "by"?: id}',
        "Only verified work lowers a thread's tension; mentioning a thread does not.",
        "Control lines are hidden from the user; everything else is your answer.",
    ]
)


AUTONOMY_PROMPT = (
    "(No one wrote this message: this is an autonomy cycle run by your runtime. Look at your "
    "threads by tension, pick one, and do work you can show: change a workspace file, close a "
    "commitment with evidence, or resolve the thread with its verdict.)"
)


# The protocol for a small model (the embedded 135M one): two control lines in ~56 tokens
# instead of ~260, so its context holds memory rather than rules it rarely follows.
COMPACT_PROTOCOL = "\n".join(
    [
        "To promise something, write a line COMMIT: <text>. When a promise is kept, write a line "
        "CLOSE: <cid>. These lines are hidden from the user.",
        "Answer in one or two short sentences, using the memory the user gives when it helps.",
    ]
)


def system_prompt(identity: Identity, context: AssembledContext, compact: bool = False) -> str:
    """The system message: who the mind is, the protocol, and the delimited memory, in that
    order: the part that never changes comes first, so a server's prompt cache reuses it (the
    name is stored text like any other: one line, no tag)."""
    who = (
        f"You are {one_line(identity.name)}, a mind whose memory is an append-only ledger. "
        "Answer the user helpfully and briefly."
    )
    protocol = COMPACT_PROTOCOL if compact else PROTOCOL
    return "\n\n".join(part for part in (who, protocol, context.rendered) if part)


def prompt_messages(
    identity: Identity,
    context: AssembledContext,
    text: str,
    compact: bool = False,
    client: ClientChat | None = None,
) -> list[dict[str, Any]]:
    """The messages a turn sends. A small model (`compact`) gets the memory right before the
    question in the user message, and a system message that never changes (all of it cached
    by the server): the 135M model answered from memory there and not from the system message
    (bench/embedded_settings.py). A caller's system prompt (`client`) follows the mind's, in
    its own quoted block; its earlier messages come before the message, as sent. A turn whose
    message is tool results ends with them, as tool messages (no memory in a user message:
    a model that takes tools is never a compact one). The message carries its speaker's name
    when the caller gave one (`client.name`, checked: domain/client_chat.py)."""
    client = client or ClientChat()
    extra = f"\n\n{client_block(client.system)}" if client.system is not None else ""
    history = [dict(m) for m in client.history]
    named = {"name": client.name} if client.name is not None else {}
    if client.results:
        return [
            {"role": "system", "content": system_prompt(identity, context) + extra},
            *history,
            *(tool_message(r) for r in client.results),
        ]
    if not compact:
        return [
            {"role": "system", "content": system_prompt(identity, context) + extra},
            *history,
            {"role": "user", "content": text, **named},
        ]
    system = system_prompt(identity, AssembledContext([], "", 0), compact=True) + extra
    memory = f"{context.rendered}\n\n" if context.rendered else ""
    return [
        {"role": "system", "content": system},
        *history,
        {"role": "user", "content": memory + text, **named},
    ]
