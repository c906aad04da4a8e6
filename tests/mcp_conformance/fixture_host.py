"""The conformance suite's fixture tools, as host tools of a hermes-tools
runtime served over streamable HTTP through the C ABI
(``ht_runtime_serve_mcp``, Python binding).

The official MCP conformance suite (``@modelcontextprotocol/conformance``)
tests a server by calling tools whose names, arguments and results its
server scenarios define (src/scenarios/server/*.ts of the suite). Each
tool here is registered like any host's: a spec and a handler. Content
blocks (image, audio, embedded resource) come from tools whose spec
declares ``"mcp_content": true``; logging, progress, sampling and
elicitation go through the call (``call.log``, ``call.progress``,
``call.client_request``), so the suite checks what the server does with
what a host does, not canned answers of the server.

Run: ``python fixture_host.py`` prints the server's URL on its first line
and serves until stdin closes (run.py drives it). The suite's client sends
no bearer token, so this endpoint runs with ``"auth": "none"`` (loopback
only, as every hermes-tools endpoint).
"""

from __future__ import annotations

import base64
import io
import json
import sys
import time
import wave
import zlib
import struct

from hermes_tools import Runtime, ToolCall


def png_1x1_red() -> str:
    """A 1x1 red PNG, made here (base64)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        c = struct.pack(">I", len(data)) + kind + data
        return c + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"\x00\xff\x00\x00"  # filter 0, one RGB pixel
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    return base64.b64encode(png).decode()


def wav_silence() -> str:
    """10 ms of 8 kHz mono silence as a WAV file (base64)."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(b"\x80" * 80)
    return base64.b64encode(buf.getvalue()).decode()


NO_ARGS = {"type": "object", "properties": {}}


def spec(name: str, description: str, parameters: dict = NO_ARGS, **extra) -> dict:
    return {
        "name": name,
        "toolset": "conformance",
        "schema": {"name": name, "description": description, "parameters": parameters},
        **extra,
    }


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def register(rt: Runtime) -> list[str]:
    image = png_1x1_red()
    audio = wav_silence()
    names = []

    def tool(s: dict, handler) -> None:
        names.append(rt.register_tool(s, handler))

    tool(spec("test_simple_text", "Returns simple text"),
         lambda call: "This is a simple text response for testing.")
    tool(spec("test_image_content", "Returns an image", mcp_content=True),
         lambda call: {"content": [{"type": "image", "data": image, "mimeType": "image/png"}]})
    tool(spec("test_audio_content", "Returns audio", mcp_content=True),
         lambda call: {"content": [{"type": "audio", "data": audio, "mimeType": "audio/wav"}]})
    tool(spec("test_embedded_resource", "Returns an embedded resource", mcp_content=True),
         lambda call: {"content": [{"type": "resource", "resource": {
             "uri": "test://embedded-resource", "mimeType": "text/plain",
             "text": "This is an embedded resource content."}}]})
    tool(spec("test_multiple_content_types", "Returns text, an image and a resource", mcp_content=True),
         lambda call: {"content": [
             text("Multiple content types test:"),
             {"type": "image", "data": image, "mimeType": "image/png"},
             {"type": "resource", "resource": {
                 "uri": "test://mixed-content-resource", "mimeType": "application/json",
                 "text": json.dumps({"test": "data", "value": 123})}}]})

    def with_logging(call: ToolCall) -> str:
        for i, m in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
            if i:
                time.sleep(0.05)
            call.log("info", m)
        return "Tool with logging executed successfully"

    tool(spec("test_tool_with_logging", "Sends log messages while it runs"), with_logging)

    def with_progress(call: ToolCall) -> str:
        for i, p in enumerate((0, 50, 100)):
            if i:
                time.sleep(0.05)
            call.progress(p, 100)
        return "Tool with progress executed successfully"

    tool(spec("test_tool_with_progress", "Reports progress while it runs"), with_progress)

    def error(call: ToolCall) -> None:
        raise RuntimeError("This tool intentionally returns an error for testing")

    tool(spec("test_error_handling", "Always fails"), error)

    def sampling(call: ToolCall) -> str:
        r = call.client_request("sampling/createMessage", {
            "messages": [{"role": "user", "content": text(call.args["prompt"])}],
            "maxTokens": 100,
        }, timeout=30)
        content = r.get("content")
        said = content.get("text") if isinstance(content, dict) else json.dumps(content)
        return f"LLM response: {said}"

    tool(spec("test_sampling", "Asks the client's model", {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
        "required": ["prompt"],
    }), sampling)

    def elicit(call: ToolCall, message: str, schema: dict, label: str) -> str:
        r = call.client_request("elicitation/create",
                                {"message": message, "requestedSchema": schema}, timeout=30)
        return f"{label}: action={r.get('action')}, content={json.dumps(r.get('content'))}"

    tool(spec("test_elicitation", "Asks the client's user", {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message to show the user"}},
        "required": ["message"],
    }), lambda call: elicit(call, call.args["message"], {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }, "User response"))

    tool(spec("test_elicitation_sep1034_defaults", "Asks with default values (SEP-1034)"),
         lambda call: elicit(call, "Please review and update the form fields with defaults", {
             "type": "object",
             "properties": {
                 "name": {"type": "string", "description": "User name", "default": "John Doe"},
                 "age": {"type": "integer", "description": "User age", "default": 30},
                 "score": {"type": "number", "description": "User score", "default": 95.5},
                 "status": {"type": "string", "description": "User status",
                            "enum": ["active", "inactive", "pending"], "default": "active"},
                 "verified": {"type": "boolean", "description": "Verification status", "default": True},
             },
         }, "Elicitation completed"))

    tool(spec("test_elicitation_sep1330_enums", "Asks with every enum form (SEP-1330)"),
         lambda call: elicit(call, "Please select options from the enum fields", {
             "type": "object",
             "properties": {
                 "untitledSingle": {"type": "string", "description": "Select one option",
                                    "enum": ["option1", "option2", "option3"]},
                 "titledSingle": {"type": "string", "description": "Select one option with titles",
                                  "oneOf": [{"const": "value1", "title": "First Option"},
                                            {"const": "value2", "title": "Second Option"},
                                            {"const": "value3", "title": "Third Option"}]},
                 "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                                "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"]},
                 "untitledMulti": {"type": "array", "description": "Select multiple options",
                                   "minItems": 1, "maxItems": 3,
                                   "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                 "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                                 "minItems": 1, "maxItems": 3,
                                 "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                     {"const": "value2", "title": "Second Choice"},
                                                     {"const": "value3", "title": "Third Choice"}]}},
             },
             "required": [],
         }, "Elicitation completed"))

    # server-sse-polling (SEP-1699) calls it to see whether the server closes
    # the call's stream before the result and resumes it on a reconnect with
    # Last-Event-ID; this server does not close a call's stream, so the suite
    # reports that part as INFO (README) and checks the priming event and
    # the retry field.
    def reconnection(call: ToolCall) -> str:
        time.sleep(0.1)
        return "Reconnection test completed"

    tool(spec("test_reconnection", "Answers after a short wait (SSE polling scenario)"), reconnection)

    tool(spec("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    }), lambda call: f"JSON Schema 2020-12 tool called with {json.dumps(call.args, sort_keys=True)}")
    return names


def main() -> None:
    rt = Runtime({"builtin_toolsets": []})
    register(rt)
    server = rt.serve_mcp({"transport": "http", "auth": "none"})
    print(server.url, flush=True)
    # Serve until the driver closes our stdin.
    sys.stdin.read()
    server.close()
    rt.close()


if __name__ == "__main__":
    main()
