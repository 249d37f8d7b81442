"""The Tool base class and the small JSON-schema check that guards every call.

A tool is a name, a description, a JSON schema for its arguments, and `run`.
The model sees the first three; the agent calls the fourth. Tools keep no state of
their own: what they change (the cwd, the todo list) lives in the Workspace they
are handed, so one tool instance never leaks one agent's state into another's.
"""

from __future__ import annotations

from .workspace import Workspace


class ToolError(Exception):
    """An expected failure whose message is written for the model to act on."""


class Tool:
    name: str = ""
    description: str = ""
    parameters: dict = {"type": "object", "properties": {}, "additionalProperties": False}
    mutating: bool = False  # does it change files or run commands? (consent, plan mode)

    def run(self, ws: Workspace, **args) -> str:
        raise NotImplementedError

    def reads(self, args: dict, ws: Workspace) -> bool:
        """Does this call only read? Consent runs it without a question. (Bash tells its
        commands apart: `git log` reads, `git commit` does not.)"""
        return not self.mutating

    def state(self, ws: Workspace) -> str:
        """What this tool keeps in the workspace that the model must always see (the todo
        tool: the list), or "". The agent tells it to the model, and again when it changes.
        Begin it with a label ("Your todo list: ..."): the agent tells each tool's part by it,
        as one paragraph (any blank line inside is dropped)."""
        return ""

    def schema(self) -> dict:
        """The tool as the OpenAI chat API describes a function."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def __repr__(self):
        return f"<tool {self.name}>"


_TYPES = {
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


def _is(value, type_name: str) -> bool:
    if type_name not in _TYPES:  # unknown (an MCP server may say anything): the tool decides
        return True
    # bool is a subclass of int in Python, but not in JSON.
    if type_name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[type_name])


def problems(schema: dict, value, where: str = "") -> list[str]:
    """Every way `value` breaks `schema`, as short phrases the model can act on.

    Covers what tool schemas use: type, required, properties,
    additionalProperties: false, enum, items, minimum/maximum, minItems/maxItems.
    """
    if not isinstance(schema, dict):
        return []  # `true` (anything goes) or a form we don't check
    label = where or "arguments"
    wanted = schema.get("type")
    if wanted:
        names = wanted if isinstance(wanted, list) else [wanted]
        if not any(_is(value, n) for n in names):
            got = f"{type(value).__name__} {value!r:.60}"
            return [f"{label} should be {' or '.join(names)}, got {got}"]
    found = []
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{label} should be one of {schema['enum']}, got {value!r:.60}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{label} should be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{label} should be at most {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        found += _object_problems(schema, value, where)
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            found.append(f"{label} should have at least {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{label} should have at most {schema['maxItems']} items")
        for i, item in enumerate(value):
            found += problems(schema.get("items", {}), item, f"{label}[{i}]")
    return found


def _object_problems(schema: dict, value: dict, where: str) -> list[str]:
    props = schema.get("properties", {})
    prefix = f"{where}." if where else ""
    found = [f"missing required argument '{prefix}{k}'" for k in schema.get("required", [])
             if k not in value]
    if schema.get("additionalProperties") is False:
        expected = ", ".join(props) or "none"
        found += [f"unexpected argument '{prefix}{k}' (expected: {expected})" for k in value
                  if k not in props]
    for k, v in value.items():
        if k in props:
            found += problems(props[k], v, f"{prefix}{k}")
    return found
