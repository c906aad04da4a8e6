"""Build a tool's JSON schema from a Python function's type hints and docstring."""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from typing import Any, Callable, Literal, Union

_PRIMITIVES = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


def type_schema(tp: Any) -> dict:
    """JSON schema for one annotation (int/float/str/bool/list/dict/Optional/Literal/...)."""
    if tp is inspect.Parameter.empty or tp is Any or tp is object:
        return {}
    if tp in _PRIMITIVES:
        return dict(_PRIMITIVES[tp])
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        schema = type_schema(args[0])
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
            elif isinstance(extra, dict):
                schema.update(extra)
        return schema
    if origin is Literal:
        values = list(args)
        schema: dict = {"enum": values}
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and next(iter(kinds)) in _PRIMITIVES:
            schema.update(_PRIMITIVES[next(iter(kinds))])
        return schema
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        non_null = [a for a in args if a is not type(None)]
        if len(non_null) == 1:
            return type_schema(non_null[0])
        return {"anyOf": [type_schema(a) for a in non_null]}
    if tp in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        schema = {"type": "array"}
        if args and args[0] is not Ellipsis:
            item_types = [a for a in args if a is not Ellipsis]
            if len(set(item_types)) == 1:
                schema["items"] = type_schema(item_types[0])
            else:
                schema["items"] = {"anyOf": [type_schema(a) for a in item_types]}
        return schema
    if tp is dict or origin is dict:
        schema = {"type": "object"}
        if len(args) == 2 and args[1] is not Any:
            schema["additionalProperties"] = type_schema(args[1])
        return schema
    if inspect.isclass(tp) and typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp)
        required = sorted(getattr(tp, "__required_keys__", hints.keys()))
        return {
            "type": "object",
            "properties": {k: type_schema(v) for k, v in hints.items()},
            "required": required,
        }
    raise TypeError(f"hermes_tools: cannot build a JSON schema for the annotation {tp!r}")


def _is_optional(tp: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin is Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        return type(None) in typing.get_args(tp)
    return False


_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|Examples?|Notes?)\s*:\s*$")
_GOOGLE_ARG = re.compile(r"^\s*\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_REST_ARG = re.compile(r"^\s*:param\s+(?:[\w\[\], |.]+\s+)?(\w+)\s*:\s*(.*)$")
_NUMPY_HEADER = re.compile(r"^\s*(Parameters|Returns|Raises)\s*$")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {param: description}) from a Google, reST or NumPy style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    desc_lines: list[str] = []
    params: dict[str, str] = {}
    section = None
    current = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m_rest = _REST_ARG.match(line)
        if m_rest:
            current = m_rest.group(1)
            params[current] = m_rest.group(2).strip()
            section = "rest"
            i += 1
            continue
        if re.match(r"^\s*:(returns?|raises?|rtype|type)\b", line):
            section = "rest-other"
            current = None
            i += 1
            continue
        m_sec = _SECTION.match(line)
        if m_sec:
            section = "args" if m_sec.group(1) in ("Args", "Arguments", "Parameters", "Params") else "other"
            current = None
            i += 1
            continue
        if _NUMPY_HEADER.match(line) and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            section = "numpy" if line.strip() == "Parameters" else "other"
            current = None
            i += 2
            continue
        if section is None:
            desc_lines.append(line)
        elif section == "args":
            m = _GOOGLE_ARG.match(line)
            indent = len(line) - len(line.lstrip())
            if m and indent <= 4 and not (current and indent > 4):
                current = m.group(1)
                params[current] = m.group(2).strip()
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "numpy":
            if line.strip() and not line.startswith((" ", "\t")):
                current = line.split(":")[0].strip()
                params[current] = ""
            elif current and line.strip():
                params[current] = (params[current] + " " + line.strip()).strip()
        elif section == "rest" and current and line.startswith((" ", "\t")) and line.strip():
            params[current] = (params[current] + " " + line.strip()).strip()
        i += 1
    description = "\n".join(desc_lines).strip()
    # Keep the summary paragraphs only.
    return description, params


# Annotations that mark a handler's call parameter (not a tool argument).
# The runtime module registers its ToolCall class here, so this module does
# not import the runtime (which imports this one).
CALL_TYPES: list = []


def _is_call_param(param: inspect.Parameter, hints: dict) -> bool:
    return param.name == "call" or any(hints.get(param.name) is t for t in CALL_TYPES)


def function_schema(fn: Callable, name: str | None = None, description: str | None = None) -> dict:
    """An OpenAI function schema ``{"name","description","parameters"}`` for ``fn``."""
    sig = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # unresolved forward refs: fall back to raw annotations
        hints = {k: p.annotation for k, p in sig.parameters.items()}
    doc_desc, doc_params = parse_docstring(inspect.getdoc(fn))
    props: dict[str, dict] = {}
    required: list[str] = []
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        if _is_call_param(param, hints):
            continue
        tp = hints.get(pname, inspect.Parameter.empty)
        schema = type_schema(tp)
        if pname in doc_params and doc_params[pname] and "description" not in schema:
            schema["description"] = doc_params[pname]
        if param.default is not inspect.Parameter.empty:
            if param.default is not None:
                try:
                    json.dumps(param.default)
                    schema["default"] = param.default
                except (TypeError, ValueError):
                    pass
        elif not _is_optional(tp):
            required.append(pname)
        props[pname] = schema
    parameters: dict = {"type": "object", "properties": props}
    if required:
        parameters["required"] = required
    return {
        "name": name or fn.__name__,
        "description": description if description is not None else doc_desc,
        "parameters": parameters,
    }
