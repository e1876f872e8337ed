"""A tool's JSON Schemas: its input (the API schema's, with the words the model reads set on
each parameter) and its output (what the API's body answers, apps/api/registry.py)."""

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


def output_schema(endpoints: Iterable[Endpoint]) -> JsonSchemaValue:
    """The schema of the body any of `endpoints` answers, as the tool's structured content."""
    return body_schema(kind for endpoint in endpoints for kind in declared(endpoint).kinds)
