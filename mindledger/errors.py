"""Every error a front-end maps to its output (an exit code and one line, an HTTP status and
code, MCP's `isError`), importable from this one place: the domain's `MindError` and its
kinds, and the errors the read models and adapters raise.

The domain's kinds load with this module; the rest load on first use, each from the module
that raises it (those modules bring DuckDB, networkx or numpy: seconds that `mind --help` and
a server that never meets the error need not pay).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from mindledger.domain.errors import (
    AlreadyInitialisedError,
    CommitmentAlreadyClosedError,
    ConflictError,
    IdentityError,
    InvalidInputError,
    LedgerBusyError,
    LedgerCorruptError,
    LedgerReadOnlyError,
    LedgerUnverifiedError,
    MindError,
    NotFoundError,
    NotInitialisedError,
    ReadModelCorruptError,
    ResolutionError,
    ThreadResolvedError,
    UnavailableError,
    UnknownCommitmentError,
    UnknownConceptError,
    UnknownThreadError,
    UnsupportedParameterError,
)

if TYPE_CHECKING:
    from mindledger.adapters.embeddings import EmbeddingError
    from mindledger.adapters.export_check import ExportInvalidError
    from mindledger.adapters.head_anchor import AnchorUnreadableError, LedgerBehindAnchorError
    from mindledger.adapters.key_store import KeyStoreError
    from mindledger.adapters.minilm import EmbeddingModelMissingError
    from mindledger.domain.forgetting import ForgetRoleError, NothingToForgetError
    from mindledger.domain.knowledge_commands import (
        AmbiguousKnowledgeError,
        KnowledgeRoleError,
        UnknownKnowledgeError,
    )
    from mindledger.domain.text_keys import KeyedHashError
    from mindledger.domain.turn import TurnFinishedError
    from mindledger.output_paths import OutputPathError
    from mindledger.projections.engine.follower import ProjectorRunningError
    from mindledger.projections.engine.projector import ProjectionError
    from mindledger.projections.engine.purge import ReadModelHeldError
    from mindledger.projections.engine.read_only_home import HomeNotWritableError
    from mindledger.projections.engine.readmodel import ProjectorBehindError
    from mindledger.projections.engine.replay import ReplayTargetError, ReplayTargetExistsError
    from mindledger.projections.engine.status import ReadModelUnreadableError
    from mindledger.projections.queries.analytics import QueryError, QueryStoppedError
    from mindledger.projections.queries.graph import UnknownNodeError
    from mindledger.turn_refs import AmbiguousTurnError

# The errors loaded on first use, by the module that defines them.
_WHERE = {
    "TurnFinishedError": "mindledger.domain.turn",
    "ForgetRoleError": "mindledger.domain.forgetting",
    "NothingToForgetError": "mindledger.domain.forgetting",
    "KnowledgeRoleError": "mindledger.domain.knowledge_commands",
    "UnknownKnowledgeError": "mindledger.domain.knowledge_commands",
    "AmbiguousKnowledgeError": "mindledger.domain.knowledge_commands",
    "KeyedHashError": "mindledger.domain.text_keys",
    "ReplayTargetExistsError": "mindledger.projections.engine.replay",
    "ReplayTargetError": "mindledger.projections.engine.replay",
    "ProjectorBehindError": "mindledger.projections.engine.readmodel",
    "ProjectionError": "mindledger.projections.engine.projector",
    "HomeNotWritableError": "mindledger.projections.engine.read_only_home",
    "ProjectorRunningError": "mindledger.projections.engine.follower",
    "ReadModelUnreadableError": "mindledger.projections.engine.status",
    "OutputPathError": "mindledger.output_paths",
    "ReadModelHeldError": "mindledger.projections.engine.purge",
    "UnknownNodeError": "mindledger.projections.queries.graph",
    "QueryError": "mindledger.projections.queries.analytics",
    "QueryStoppedError": "mindledger.projections.queries.analytics",
    "EmbeddingError": "mindledger.adapters.embeddings",
    "AnchorUnreadableError": "mindledger.adapters.head_anchor",
    "LedgerBehindAnchorError": "mindledger.adapters.head_anchor",
    "EmbeddingModelMissingError": "mindledger.adapters.minilm",
    "KeyStoreError": "mindledger.adapters.key_store",
    "ExportInvalidError": "mindledger.adapters.export_check",
    "AmbiguousTurnError": "mindledger.turn_refs",
}

__all__ = [
    "AlreadyInitialisedError",
    "AmbiguousKnowledgeError",
    "AmbiguousTurnError",
    "AnchorUnreadableError",
    "CommitmentAlreadyClosedError",
    "ConflictError",
    "EmbeddingError",
    "EmbeddingModelMissingError",
    "ExportInvalidError",
    "ForgetRoleError",
    "HomeNotWritableError",
    "IdentityError",
    "InvalidInputError",
    "KeyStoreError",
    "KeyedHashError",
    "KnowledgeRoleError",
    "LedgerBehindAnchorError",
    "LedgerBusyError",
    "LedgerCorruptError",
    "LedgerReadOnlyError",
    "LedgerUnverifiedError",
    "MindError",
    "NotFoundError",
    "NotInitialisedError",
    "NothingToForgetError",
    "OutputPathError",
    "ProjectionError",
    "ProjectorBehindError",
    "ProjectorRunningError",
    "QueryError",
    "QueryStoppedError",
    "ReadModelCorruptError",
    "ReadModelHeldError",
    "ReadModelUnreadableError",
    "ReplayTargetError",
    "ReplayTargetExistsError",
    "ResolutionError",
    "ThreadResolvedError",
    "TurnFinishedError",
    "UnavailableError",
    "UnknownCommitmentError",
    "UnknownConceptError",
    "UnknownKnowledgeError",
    "UnknownNodeError",
    "UnknownThreadError",
    "UnsupportedParameterError",
]


def __getattr__(name: str) -> Any:
    """An error defined outside the domain's errors module, imported on first use."""
    if name in _WHERE:
        return getattr(import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'mindledger.errors' has no attribute {name!r}")
