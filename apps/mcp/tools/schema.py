"""A tool's JSON Schemas: its input (the API schema's, with the words the model reads set on
each parameter) and its output (what the API's body answers, apps/api/registry.py)."""

import re
from collections.abc import Iterable, Mapping

from ninja import Schema
from pydantic.json_schema import JsonSchemaValue

from apps.api.registry import Endpoint, body_schema, declared

_REF = "#/$defs/"


def _object(schema: JsonSchemaValue, root: JsonSchemaValue) -> JsonSchemaValue | None:
    """The object schema a property holds: itself, its array's items, a `$ref` into the
    root's `$defs`, or the first `anyOf` branch that is one of these (None: a scalar)."""
    if "properties" in schema:
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return _object(root["$defs"][ref.removeprefix(_REF)], root)
    if isinstance(schema.get("items"), dict):
        return _object(schema["items"], root)
    for branch in schema.get("anyOf", []):
        found = _object(branch, root)
        if found is not None:
            return found
    return None


def _property(root: JsonSchemaValue, path: str) -> JsonSchemaValue:
    """The property at a dotted path (`messages.role`: `role` of each item of `messages`);
    KeyError naming the path when the schema has none there."""
    node: JsonSchemaValue | None = root
    prop: JsonSchemaValue = root
    for name in path.split("."):
        if node is None or name not in node.get("properties", {}):
            raise KeyError(f"no parameter {path!r} in {root.get('title')}")
        prop = node["properties"][name]
        node = _object(prop, root)
    return prop


def input_schema(params: type[Schema], docs: Mapping[str, str]) -> JsonSchemaValue:
    """`params`' JSON Schema with `docs[path]` as the description of each parameter it names
    (dotted paths reach into nested objects). A description inside an `anyOf` branch goes,
    so the model reads one text per parameter."""
    schema = params.model_json_schema()
    for path, text in docs.items():
        prop = _property(schema, path)
        prop["description"] = text
        for branch in prop.get("anyOf", []):
            branch.pop("description", None)
    return schema


def without(schema: JsonSchemaValue, paths: Iterable[str]) -> JsonSchemaValue:
    """`schema` without the optional parameters at these dotted paths (a call may still
    send them); KeyError for a path that is not there or a required parameter."""
    for path in paths:
        parent, _, name = path.rpartition(".")
        node = _object(_property(schema, parent), schema) if parent else schema
        if node is None or name not in node.get("properties", {}):
            raise KeyError(f"no parameter {path!r} in {schema.get('title')}")
        if name in node.get("required", []):
            raise KeyError(f"{path!r} is required in {schema.get('title')}")
        del node["properties"][name]
    return schema


def output_schema(endpoints: Iterable[Endpoint]) -> JsonSchemaValue:
    """The schema of the body any of `endpoints` answers, as the tool's structured content."""
    return body_schema(kind for endpoint in endpoints for kind in declared(endpoint).kinds)


# Titles (each the parameter's name again) and limits the endpoint enforces anyway (its 422
# names them): a model needs none of them to call well.
_LIMITS = frozenset({"title", "maxLength", "minLength", "maxItems", "minItems"})
_NULL = {"type": "null"}
_NO_LIMIT = 1_000_000
# A full stop that ends a sentence: "e.g. telegram:42" goes on.
_SENTENCE = re.compile(r"(?<=[.])\s+(?=[A-Z`])")


def _first_sentence(text: str) -> str:
    return _SENTENCE.split(text, maxsplit=1)[0]


def compact_schema(schema: JsonSchemaValue, root: JsonSchemaValue | None = None) -> JsonSchemaValue:
    """`schema` for the default tool set (docs/mcp.md, "Two tool sets"): `$defs` inlined,
    no titles or length limits, an optional parameter's `anyOf` with null as its one type
    (null is still accepted), and each description's first sentence."""
    root = schema if root is None else root
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return compact_schema(root["$defs"][ref.removeprefix(_REF)], root)
    out: JsonSchemaValue = {}
    for key, value in schema.items():
        if key in _LIMITS or key == "$defs" or (key == "default" and value is None):
            continue
        if key == "additionalProperties" and isinstance(value, bool):
            # True is JSON Schema's default; with False or not, an argument the tool does
            # not take is the API's 422 (naming it), so a model needs neither.
            continue
        if key == "maximum" and value >= _NO_LIMIT:
            continue  # a guard against absurd numbers, no limit a model meets
        if key == "properties":
            out[key] = {name: compact_schema(prop, root) for name, prop in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = compact_schema(value, root)
        elif key == "anyOf":
            out[key] = [compact_schema(branch, root) for branch in value]
        elif key == "description":
            out[key] = _first_sentence(value)
        else:
            out[key] = value
    branches = out.get("anyOf", [])
    if _NULL in branches and schema.get("default", ...) is None:
        rest = [branch for branch in branches if branch != _NULL]
        del out["anyOf"]
        out = {**rest[0], **out} if len(rest) == 1 else {"anyOf": rest, **out}
    return out
