"""The comparison behind the schema-drift test: the server's OpenAPI schema against the
client's models (memoryhub_client.models.COMPONENTS) and methods (memoryhub_client._call's
OPERATIONS). Each difference is one line of text, so a test can say exactly what drifted."""

import typing
from typing import Any

from memoryhub_client._call import Call, Operation
from pydantic import BaseModel

SERVER_REF = "#/components/schemas/"
CLIENT_REF = "#/$defs/"


def _type(schema: dict[str, Any], refs: dict[str, str]) -> str:
    """A property's type as one comparable string; `refs` maps a $ref's last segment to the
    server component it stands for. Constraints (lengths, ranges, patterns) are left out:
    the server enforces them."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"<{refs.get(name, '?' + name)}>"
    if "allOf" in schema and len(schema["allOf"]) == 1:
        return _type(schema["allOf"][0], refs)
    if "anyOf" in schema:
        return " | ".join(sorted({_type(s, refs) for s in schema["anyOf"]}))
    if "enum" in schema:
        return "enum(" + ", ".join(sorted(map(repr, schema["enum"]))) + ")"
    kind = schema.get("type")
    if kind == "array":
        return f"array[{_type(schema.get('items', {}), refs)}]"
    if kind == "object":
        extra = schema.get("additionalProperties", True)
        return "object" if extra is True else f"object[{_type(extra, refs)}]"
    if kind == "string" and "format" in schema:
        return f"string:{schema['format']}"
    return str(kind) if kind else "any"


def _client_schema(model: type[BaseModel]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model's own JSON schema and its $defs (the models it refers to)."""
    schema = model.model_json_schema(mode="validation", ref_template=CLIENT_REF + "{model}")
    return schema, schema.get("$defs", {})


def compare_components(server: dict[str, Any], client: dict[str, type[BaseModel]]) -> list[str]:
    """Every difference between the server's component schemas and the client models that
    mirror them: a missing model or field, an extra field, another type, another
    required-ness."""
    components = server["components"]["schemas"]
    server_refs = {name: name for name in components}
    client_refs = {model.__name__: name for name, model in client.items()}
    found = [f"{name}: no client model" for name in sorted(components.keys() - client.keys())]
    found += [f"{name}: not a server schema" for name in sorted(client.keys() - components.keys())]
    for name in sorted(components.keys() & client.keys()):
        ours, theirs = client[name], components[name]
        schema, _ = _client_schema(ours)
        label = f"the client's {ours.__name__}"
        server_props = theirs.get("properties", {})
        client_props = schema.get("properties", {})
        for field in sorted(server_props.keys() - client_props.keys()):
            found.append(f"{name}.{field}: on the server, not in {label}")
        for field in sorted(client_props.keys() - server_props.keys()):
            found.append(f"{name}.{field}: in {label}, not on the server")
        server_required = set(theirs.get("required", []))
        client_required = set(schema.get("required", []))
        for field in sorted(server_props.keys() & client_props.keys()):
            a = _type(server_props[field], server_refs)
            b = _type(client_props[field], client_refs)
            if a != b:
                found.append(f"{name}.{field}: server {a}, client {b}")
            if (field in server_required) != (field in client_required):
                where = "required" if field in server_required else "optional"
                found.append(f"{name}.{field}: {where} on the server, not in {label}")
    return found


def _answer_type(operation: Operation, refs: dict[str, str]) -> str:
    """What the client method reads its answer as, in _type's terms ("none": no body)."""
    hint = typing.get_type_hints(operation.build)["return"]
    assert typing.get_origin(hint) is Call, hint
    (answer,) = typing.get_args(hint)
    if answer is type(None):
        return "none"
    if answer is bytes:
        return "bytes"
    if typing.get_origin(answer) is list:
        (item,) = typing.get_args(answer)
        return f"array[<{refs[item.__name__]}>]"
    return f"<{refs[answer.__name__]}>"


def _server_answer(operation: dict[str, Any], refs: dict[str, str]) -> str:
    """The schema of an operation's first 2xx answer, in _type's terms."""
    status, response = min((s, r) for s, r in operation["responses"].items() if s < "300")
    content = response.get("content", {})
    if "application/json" in content:
        return _type(content["application/json"]["schema"], refs)
    return "none" if status == "204" else "bytes"


def compare_operations(
    server: dict[str, Any],
    client: dict[tuple[str, str], Operation],
    components: dict[str, type[BaseModel]],
) -> list[str]:
    """Every server operation without a client method, every client method whose operation
    the server does not serve, and every method reading its answer as another schema."""
    served = {
        (method.upper(), path): operation
        for path, operations in server["paths"].items()
        for method, operation in operations.items()
    }
    client_refs = {model.__name__: name for name, model in components.items()}
    server_refs = {name: name for name in server["components"]["schemas"]}
    found = [f"{m} {p}: no client method" for m, p in sorted(served.keys() - client.keys())]
    found += [
        f"{m} {p}: {client[(m, p)].qualname} calls it, the server does not serve it"
        for m, p in sorted(client.keys() - served.keys())
    ]
    for key in sorted(served.keys() & client.keys()):
        theirs = _server_answer(served[key], server_refs)
        ours = _answer_type(client[key], client_refs)
        if theirs != ours:
            method, path = key
            found.append(
                f"{method} {path}: the server answers {theirs}, {client[key].qualname} reads {ours}"
            )
    return found
