"""Long-message conversations for `bench.longmsg`: technical chats whose assistant replies run to
about 1,000 tokens, with evidence annotated by rule (deterministic for a seed).

Each conversation is a user working on a handful of services over several sessions (a day
each). A fact is one sentence with a value no other message holds (a version, a count, a name):
most are said by the user, in a short message; some by the assistant, in the middle of a long
reply. Every reply talks at length about the service and topic of the message it answers, in
the same words the questions use, so a message-level ranker finds replies as readily as facts.

Questions come from facts by template: one fact (`single`), a fact and its later update (`update`,
both statements are evidence), or two facts of one service said in different sessions (`pair`).
A question's evidence is the messages holding its facts' sentences; each is found only when the
fact's `needle` (its value) is in the context, inside that message's item.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

START = datetime(2025, 3, 3, 9, tzinfo=UTC)
SERVICES = [
    "billing-api", "ledgerd", "search-indexer", "auth-gateway", "report-worker", "media-store",
    "notify-hub", "geo-router", "cart-service", "audit-log", "feature-svc", "export-runner",
]  # fmt: skip
PEOPLE = ["Priya", "Tomasz", "Aiko", "Mateus", "Leila", "Kofi", "Ingrid", "Ravi", "Sofia"]
DATABASES = ["Postgres", "MySQL", "Cassandra", "Redis", "DynamoDB", "SQLite"]
LANGS = ["Rust", "Go", "Kotlin", "Python", "TypeScript", "Elixir", "Java"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TOPICS = ["database", "deploy", "pool", "oncall", "latency", "backup", "language", "queue", "retry"]

# topic -> (fact sentence, question, needle), with {s} the service and {v} the value.
FACTS: dict[str, tuple[str, str, str]] = {
    "database": (
        "Our {s} service runs on {db} {v} in the production cluster.",
        "Which {db} release is behind {s}?",
        "{db} {v}",
    ),
    "deploy": (
        "Deploys of {s} go out every {v} after the morning standup.",
        "When does {s} ship?",
        "every {v}",
    ),
    "pool": (
        "I set the {s} connection pool to {v} connections after last week's outage.",
        "How big did we make the {s} pool?",
        "{v} connections",
    ),
    "oncall": (
        "The on-call rotation for {s} is owned by {v} from the platform team.",
        "Who gets paged for {s}?",
        "owned by {v}",
    ),
    "latency": (
        "The p95 latency target we agreed for {s} is {v} ms at peak traffic.",
        "How fast does {s} have to answer at p95?",
        "{v} ms",
    ),
    "backup": (
        "Backups of {s} are kept in the {v} bucket for ninety days.",
        "Where do the {s} snapshots go?",
        "{v} bucket",
    ),
    "language": (
        "We rewrote {s} in {v} last quarter to cut memory use.",
        "What language is {s} written in?",
        "{s} in {v}",
    ),
    "queue": (
        "The {s} jobs go through the queue named {v} with a dead-letter topic.",
        "Which queue do {s} jobs use?",
        "named {v}",
    ),
    "retry": (
        "For {s} I recommend a retry budget of {v} attempts with jittered backoff.",
        "How many retries did you suggest for {s}?",
        "{v} attempts",
    ),
}
UPDATE = "Update on {s}: {fact}"
# Sentences a reply is made of: {s} the service, {t} a word of the topic, {o} another service.
REPLY = [
    "When you look at {s}, start from the {t} and work outwards to its callers.",
    "A common mistake with {s} is to tune the {t} before measuring what the service does.",
    "The {t} of {s} interacts with the connection pool, the queue and the retry policy.",
    "If {s} shares a database with {o}, the {t} of one changes the latency of the other.",
    "I would write down the current {t} settings of {s} before any change, with the reason.",
    "Measure p95 and p99 latency of {s} under production traffic, not under a synthetic load.",
    "For the {t}, a small canary of {s} tells you more than a staging run ever will.",
    "Keep the deploy of {s} separate from the {t} change so that a rollback stays simple.",
    "The on-call engineer for {s} should know where the {t} dashboards and runbooks live.",
    "Backups and restores of {s} need a drill: a backup nobody restored is only a hope.",
    "Consider what happens to the queue of {s} when {o} is down for ten minutes.",
    "Retries of {s} without a budget turn a short outage of {o} into a long one.",
    "The language and runtime of {s} matter less for the {t} than its data access pattern.",
    "Write the {t} decision for {s} into the service's README so the next person finds it.",
    "Look at the slow query log of the {s} database before touching the {t} again.",
    "An alert on the {t} of {s} should page only when a user would notice the problem.",
    "Connection pool sizing for {s} follows from the database's limits and the worker count.",
    "If the {t} of {s} changed recently, compare the error rate before and after the deploy.",
    "Here is how I would structure the {t} review for {s}, step by step, with owners.",
    "Dead-letter topics for {s} let you replay failed jobs once {o} recovers.",
    "Moving {s} to {db} would change the {t} more than any tuning of the current setup.",
    "Teams that run {s} on {db} usually revisit the {t} after the first large incident.",
    "Snapshots of {s} are only useful if the restore path of its {t} is tested too.",
    "Who gets paged for {s} matters less than whether the runbook for the {t} is current.",
]
TOPIC_WORDS = {
    "database": ["database", "schema", "replica", "database version"],
    "deploy": ["deploy schedule", "release train", "deploy pipeline", "rollout"],
    "pool": ["connection pool", "pool size", "connection limit", "worker pool"],
    "oncall": ["on-call rotation", "escalation policy", "pager setup", "rotation"],
    "latency": ["latency target", "p95 latency", "latency budget", "tail latency"],
    "backup": ["backup policy", "backup bucket", "restore drill", "retention"],
    "language": ["language choice", "rewrite", "runtime", "build tooling"],
    "queue": ["job queue", "queue name", "dead-letter topic", "consumer group"],
    "retry": ["retry budget", "backoff", "retry policy", "timeouts"],
}
ASKS = [
    "Can you help me think through the {t} for {s}?",
    "What should I look at first about the {t} of {s}?",
    "I am worried about the {t} of {s}, any advice?",
    "How would you approach the {t} of {s} this week?",
]
FILLER = [
    "The team is small so I want something we can maintain.",
    "We had a rough week with incidents.",
    "Management wants a plan by Friday.",
    "I read a few blog posts but they disagree.",
]


@dataclass
class Fact:
    service: str
    topic: str
    value: str
    message: int  # index in the conversation
    needle: str
    question: str


@dataclass
class Question:
    text: str
    kind: str  # single, update, pair
    evidence: list[tuple[int, str]]  # (message index, needle)


@dataclass
class Conversation:
    name: str
    messages: list[tuple[str, str, datetime]] = field(default_factory=list)  # role, text, time
    questions: list[Question] = field(default_factory=list)


def value(rng: random.Random, topic: str, n: int) -> tuple[str, str]:
    """A value no other fact of the conversation has (`n` keeps it unique) and its database."""
    db = rng.choice(DATABASES)
    if topic == "database":
        return f"{rng.randint(5, 17)}.{n}", db
    if topic == "deploy":
        return f"{rng.choice(WEEKDAYS)} at {7 + n % 11}:{n % 60:02d}", db
    if topic in ("pool", "latency", "retry"):
        return str(rng.randint(2, 9) * 100 + n), db
    if topic == "oncall":
        return f"{rng.choice(PEOPLE)} {chr(65 + n % 26)}.", db
    if topic == "backup":
        return f"s3-{rng.choice(['cold', 'vault', 'arch', 'safe'])}-{n}", db
    if topic == "language":
        return rng.choice(LANGS), db
    return f"jobs.{rng.choice(['alpha', 'beta', 'gamma', 'delta'])}.{n}", db


def reply(rng: random.Random, service: str, topic: str, sentences: int = 44) -> list[str]:
    """About 1,000 tokens of advice on `topic` for `service`."""
    out = []
    for _ in range(sentences):
        t = rng.choice(TOPIC_WORDS[topic])
        o = rng.choice([s for s in SERVICES if s != service])
        db = rng.choice(DATABASES)
        out.append(rng.choice(REPLY).format(s=service, t=t, o=o, db=db))
    return out


def conversation(seed: int, sessions: int = 10, exchanges: int = 6) -> Conversation:
    """One conversation: `sessions` days of `exchanges` user messages each with its reply."""
    rng = random.Random(seed)
    conv = Conversation(f"longmsg-{seed}")
    services = rng.sample(SERVICES, 4)
    facts: list[Fact] = []
    told: dict[tuple[str, str], list[Fact]] = {}
    n = 0
    for day in range(sessions):
        at = START + timedelta(days=3 * day)
        for k in range(exchanges):
            s, topic = rng.choice(services), rng.choice(TOPICS)
            t = rng.choice(TOPIC_WORDS[topic])
            ask = rng.choice(ASKS).format(t=t, s=s)
            user, body = [ask, rng.choice(FILLER)], reply(rng, s, topic)
            fact_in = rng.random()
            if fact_in < 0.8 or topic == "retry":
                n += 1
                v, db = value(rng, topic, n)
                sentence, question, needle = FACTS[topic]
                text = sentence.format(s=s, v=v, db=db)
                earlier = told.get((s, topic))
                if earlier and topic != "retry":
                    text = UPDATE.format(s=s, fact=text)
                if topic == "retry" or rng.random() < 0.12:  # said deep in a reply
                    body.insert(rng.randint(12, 32), text)
                    where = len(conv.messages) + 1
                else:
                    user.insert(rng.randint(0, 1), text)
                    where = len(conv.messages)
                fact = Fact(
                    s, topic, v, where, needle.format(s=s, v=v, db=db),
                    question.format(s=s, db=db),
                )  # fmt: skip
                facts.append(fact)
                told.setdefault((s, topic), []).append(fact)
            conv.messages.append(("user", " ".join(user), at + timedelta(minutes=10 * k)))
            conv.messages.append(("assistant", " ".join(body), at + timedelta(minutes=10 * k + 1)))
    for said in told.values():
        last = said[-1]
        if len(said) > 1:  # the update and the statement it replaces
            prev = said[-2]
            now = last.question.replace("?", " now?", 1)
            evidence = [(prev.message, prev.needle), (last.message, last.needle)]
            conv.questions.append(Question(now, "update", evidence))
        else:
            conv.questions.append(Question(last.question, "single", [(last.message, last.needle)]))
    by_service: dict[str, list[Fact]] = {}
    for f in facts:
        by_service.setdefault(f.service, []).append(f)
    for _, fs in sorted(by_service.items()):
        firsts = {f.topic: f for f in reversed(fs)}  # each topic's first statement
        apart = sorted(firsts.values(), key=lambda f: f.message)
        if len(apart) >= 2 and apart[0].message // (2 * exchanges) != apart[-1].message // (
            2 * exchanges
        ):
            a, b = apart[0], apart[-1]
            if a.topic in ("retry",) or b.topic in ("retry",):
                continue
            text = f"{a.question[:-1]}, and {b.question[0].lower()}{b.question[1:]}"
            conv.questions.append(
                Question(text, "pair", [(a.message, a.needle), (b.message, b.needle)])
            )
    return conv


def conversations(
    seed: int, count: int, sessions: int = 10, exchanges: int = 6
) -> list[Conversation]:
    """`count` conversations from `seed`."""
    return [conversation(seed * 1000 + i, sessions, exchanges) for i in range(count)]
