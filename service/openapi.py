"""The OpenAPI 3.1 document, made from the same route table the server serves."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mindledger.service.endpoints import Endpoint, Param

if TYPE_CHECKING:
    from pydantic import BaseModel

ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
REF = "#/components/schemas/{model}"
# One server-sent event of a stream (its `data` a line of JSON, as the route's summary says).
SSE_EVENT = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "event": {"type": "string"},
        "data": {"type": "string"},
        "id": {"type": "string"},
        "retry": {"type": "integer"},
    },
}


def result_schema(result: Any, schemas: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of what a route answers: a written-out schema as it is, else the
    result type's as pydantic gives it for the dumped JSON, its nested models put in
    `schemas` (components) and referred to from there."""
    if result is None:
        return {}
    if isinstance(result, dict):
        return result
    from pydantic import TypeAdapter

    schema = TypeAdapter(result).json_schema(mode="serialization", ref_template=REF)
    schemas.update(schema.pop("$defs", {}))
    return schema


def _param_schema(p: Param) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": p.kind}
    if p.minimum is not None:
        schema["minimum"] = p.minimum
    if p.maximum is not None:
        schema["maximum"] = p.maximum
    if p.choices:
        schema["enum"] = list(p.choices)
    return schema


def body_schema(model: type[BaseModel], schemas: dict[str, Any]) -> dict[str, Any]:
    """A request body's model as a reference to its schema (put in `schemas`, with the models
    it holds), as pydantic gives it for validation: what the route's check enforces."""
    schema = model.model_json_schema(mode="validation", ref_template=REF)
    schemas.update(schema.pop("$defs", {}))
    schemas[model.__name__] = schema
    return {"$ref": REF.format(model=model.__name__)}


def _errors(ep: Endpoint) -> dict[str, Any]:
    """The error answers a route may give, each in the one error shape."""
    said: dict[str, str] = {}
    if ep.body is not None or ep.own_body is not None or ep.params or not ep.open_query:
        said["400"] = "A refused request: `param` names the field at fault."
    if ep.auth:
        said["401"] = "No bearer token, or one that opens no mind here."
    if "{name}" in ep.path:
        said["404"] = "No such mind for this token (or no such item on the path)."
    said.update(ep.responses)
    said["4XX"] = "Another refusal (the code says which)."
    said["5XX"] = "The server or the model failed (503: try again after `Retry-After`)."
    error = {"content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}}
    return {status: {"description": words, **error} for status, words in said.items()}


def _operation(ep: Endpoint, schemas: dict[str, Any]) -> dict[str, Any]:
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)(?::\w+)?}", ep.path)
    ]
    parameters += [
        {
            "name": p.name,
            "in": "query",
            "required": p.required,
            "description": p.description,
            "schema": _param_schema(p),
        }
        for p in ep.params
    ]
    parameters += [
        {"name": h.name, "in": "header", "description": h.description, "schema": {"type": "string"}}
        for h in ep.headers
    ]
    content: dict[str, Any] = {}
    if ep.result is not None or not ep.streams:
        content["application/json"] = {"schema": result_schema(ep.result, schemas)}
    if ep.streams:
        content["text/event-stream"] = {"schema": SSE_EVENT}
    op: dict[str, Any] = {
        "summary": ep.summary,
        "operationId": ep.method.lower()
        + "_"
        + re.sub(r"[^a-z0-9]+", "_", ep.path.lower()).strip("_"),
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": content}, **_errors(ep)},
    }
    if ep.tags:
        op["tags"] = list(ep.tags)
    if not ep.auth:
        op["security"] = []
    body = ep.body or (ep.own_body() if ep.own_body is not None else None)
    if body is not None:
        from mindledger.service.bodies import NoBody

        op["requestBody"] = {
            "required": body is not NoBody,
            "content": {"application/json": {"schema": body_schema(body, schemas)}},
        }
    return op


def openapi_document(endpoints: Sequence[Endpoint], version: str) -> dict[str, Any]:
    """Every endpoint, with its parameters, body, what a 200 answers (the floor's result
    schema) and the error shape; bearer auth by default."""
    paths: dict[str, dict[str, Any]] = {}
    schemas: dict[str, Any] = {"Error": ERROR_SCHEMA}
    for ep in endpoints:
        path = re.sub(r"{(\w+):\w+}", r"{\1}", ep.path)
        paths.setdefault(path, {})[ep.method.lower()] = _operation(ep, schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "mindledger",
            "version": version,
            "description": "A mind's HTTP API: the same use cases and JSON as `mind ... --json`.",
        },
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": schemas,
        },
        "security": [{"bearer": []}],
    }
