"""The OpenAPI 3.1 document, made from the same route table the server serves."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mindledger.service.endpoints import Endpoint, Field, Param

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


def _body_schema(fields: Sequence[Field]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for f in fields:
        prop: dict[str, Any] = {**(f.schema or {}), "type": f.kind, "description": f.description}
        if f.minimum is not None:
            prop["minimum"] = f.minimum
        properties[f.name] = prop
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [f.name for f in fields if f.required],
        "properties": properties,
    }


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
        content["text/event-stream"] = {"schema": {"type": "string"}}
    error = {"description": "An error", "content": {"application/json": {"schema": ERROR_SCHEMA}}}
    op: dict[str, Any] = {
        "summary": ep.summary,
        "operationId": ep.method.lower()
        + "_"
        + re.sub(r"[^a-z0-9]+", "_", ep.path.lower()).strip("_"),
        "parameters": parameters,
        "responses": {"200": {"description": "OK", "content": content}, "4XX": error, "5XX": error},
    }
    if ep.tags:
        op["tags"] = list(ep.tags)
    if not ep.auth:
        op["security"] = []
    if ep.body is not None:
        op["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": _body_schema(ep.body)}},
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
