"""Runtime.serve_mcp (ht_runtime_serve_mcp) and a host tool's side of MCP:
ToolCall.log (ht_call_log), ToolCall.client_request (ht_call_client_request)
and specs with "mcp_content". The MCP client here is a raw HTTP one (no
client library deciding things); tests/mcp_conformance runs the official
conformance suite's client against the same endpoint."""

import json
import os
import time
import threading
import urllib.error
import urllib.request

import pytest

import hermes_tools
from hermes_tools import INVALID_ARGUMENT, UNSUPPORTED, HermesToolsError, McpServer, Runtime, ToolCall

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "py", "version": "1"}},
}


def image_spec(name, mcp_content):
    s = {"name": name, "toolset": "t", "schema": {"description": "an image", "parameters": {"type": "object", "properties": {}}}}
    if mcp_content:
        s["mcp_content"] = True
    return s


def post(url, body, headers):
    req = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream", **headers},
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, dict(r.headers), r.read().decode()


def messages(body):
    try:
        return [json.loads(body)]
    except ValueError:
        return [json.loads(l[5:]) for l in body.splitlines() if l.startswith("data:") and l[5:].strip()]


class Session:
    def __init__(self, server: McpServer):
        self.url = server.url
        self.auth = {"authorization": f"Bearer {server.token}"}
        status, headers, _ = post(self.url, INIT, self.auth)
        assert status == 200
        self.headers = {**self.auth, "mcp-session-id": headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        status, _, _ = post(self.url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers)
        assert status == 202
        self.next = 10

    def request(self, method, params):
        self.next += 1
        _, _, body = post(self.url, {"jsonrpc": "2.0", "id": self.next, "method": method, "params": params}, self.headers)
        return next(m for m in messages(body) if m.get("id") == self.next)


def test_serve_mcp_http_needs_the_token_and_sends_mcp_content(tmp_path):
    with Runtime({"builtin_toolsets": []}) as rt:
        rt.register_tool(image_spec("image_block", True), lambda call: {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
        rt.register_tool(image_spec("image_text", False), lambda call: {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]})
        with rt.serve_mcp({"transport": "http", "token_dir": str(tmp_path / "tok")}) as server:
            assert server.address["auth"] == "bearer"
            assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
            token_file = server.address["token_file"]
            assert os.stat(token_file).st_mode & 0o077 == 0
            assert len(server.token) >= 16
            assert server.wait(0) is False
            # No token: refused before anything runs.
            with pytest.raises(urllib.error.HTTPError) as e:
                post(server.url, INIT, {})
            assert e.value.code == 401
            s = Session(server)
            r = s.request("tools/call", {"name": "image_block", "arguments": {}})["result"]
            assert r["content"] == [{"type": "image", "data": PNG, "mimeType": "image/png"}], r
            assert not r.get("isError")
            # Without mcp_content the same output is the tool's text: a
            # result cannot make itself content blocks.
            r = s.request("tools/call", {"name": "image_text", "arguments": {}})["result"]
            assert [c["type"] for c in r["content"]] == ["text"], r
            assert json.loads(r["content"][0]["text"])["content"][0]["data"] == PNG
        # Closed: the token file is gone, and a second close is harmless.
        assert not os.path.exists(token_file)
        server.close()
        assert server.wait(0) is True


def test_call_log_reaches_the_event_handler_and_checks_the_level(rt):
    events, statuses = [], {}
    got = threading.Event()

    def on_event(ev):
        if ev.get("type") == "tool.log":
            events.append(ev)
            got.set()

    rt.set_event_handler(on_event)

    def logs(call: ToolCall):
        statuses["bad"] = call.log("loud", "no such level")
        statuses["ok"] = call.log("warning", "disk almost full")
        return "done"

    rt.register_tool(image_spec("logs", False), logs)
    assert rt.dispatch("logs", {}) == "done"
    assert got.wait(5)
    assert statuses == {"bad": INVALID_ARGUMENT, "ok": 0}
    ev = events[0]
    assert (ev["level"], ev["message"], ev["tool_name"]) == ("warning", "disk almost full", "logs")


def test_client_request_needs_a_call_made_by_an_mcp_client(rt):
    seen = {}

    def asks(call: ToolCall):
        for method in ("sampling/createMessage", "tools/call"):
            try:
                call.client_request(method, {"messages": [], "maxTokens": 1}, timeout=1)
            except HermesToolsError as e:
                seen[method] = (e.status, e.message)
        return "asked"

    rt.register_tool(image_spec("asks", False), asks)
    assert rt.dispatch("asks", {}) == "asked"
    status, message = seen["sampling/createMessage"]
    assert status == UNSUPPORTED and "not made by an MCP client" in message, seen
    status, message = seen["tools/call"]
    assert status == INVALID_ARGUMENT and "not one a tool may send" in message, seen


class _FdClient:
    """A minimal MCP client over a socketpair served by ``rt.serve_mcp``,
    answering ``elicitation/create`` with ``elicit(params)``."""

    def __init__(self, rt, name, elicit):
        import queue
        import socket
        import threading

        self.a, self.b = socket.socketpair()
        self.srv = rt.serve_mcp({"read_fd": self.b.fileno(), "write_fd": self.b.fileno()})
        self.f = self.a.makefile("rwb", buffering=0)
        self.lock = threading.Lock()
        self.waiters = {}
        self.asked = []
        self.n = 0
        self.elicit = elicit
        self._queue = queue.Queue
        threading.Thread(target=self._read, daemon=True).start()
        self.req("initialize", {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                                "clientInfo": {"name": name, "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, obj):
        with self.lock:
            self.f.write((json.dumps(obj) + "\n").encode())

    def _read(self):
        while True:
            line = self.f.readline()
            if not line:
                return
            m = json.loads(line)
            if "method" in m and "id" in m:
                self.asked.append(m)
                if m["method"] == "elicitation/create":
                    self._send({"jsonrpc": "2.0", "id": m["id"], "result": self.elicit(m["params"])})
                elif m["method"] == "ping":
                    self._send({"jsonrpc": "2.0", "id": m["id"], "result": {}})
            elif "id" in m and m["id"] in self.waiters:
                self.waiters[m["id"]].put(m)

    def req(self, method, params, timeout=60):
        self.n += 1
        q = self._queue()
        self.waiters[self.n] = q
        self._send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return q.get(timeout=timeout)

    def close(self):
        self.a.close()
        self.b.close()


def test_two_servers_on_one_runtime_never_answer_each_others_approvals(tmp_path):
    # Red team 2026-11-28 (round 2): every server numbered its calls mcp-1,
    # mcp-2, ...; the approval of the victim's call went to the attacker's
    # client, which accepted it, and the victim's command ran.
    import threading

    victim_dir = tmp_path / "victim"
    victim_dir.mkdir()
    (victim_dir / "precious").write_text("x")
    rt = hermes_tools.Runtime({"builtin_toolsets": ["terminal"],
                               "terminal": {"cwd": str(tmp_path), "backend": "local"}})
    try:
        victim = _FdClient(rt, "victim", lambda p: {"action": "decline"})
        attacker = _FdClient(rt, "attacker", lambda p: {"action": "accept", "content": {"approve": True}})
        t = threading.Thread(target=lambda: attacker.req("tools/call", {"name": "terminal", "arguments": {"command": "sleep 3"}}))
        t.start()
        time.sleep(0.5)  # the attacker's call is live
        r = victim.req("tools/call", {"name": "terminal", "arguments": {"command": f"rm -rf {victim_dir}"}})
        assert victim_dir.exists(), r
        assert len(victim.asked) == 1, victim.asked
        assert attacker.asked == [], attacker.asked
        t.join()
        victim.close()
        attacker.close()
    finally:
        rt.close()


def test_a_server_stopping_first_does_not_take_the_next_ones_approvals(tmp_path):
    # Red team 2026-11-28 (round 3): servers A then B; A stopped; B's next
    # dangerous command went to the host's handler (which approved it)
    # instead of B's client (which declines): A put back the handler that
    # was there before it, removing B's.
    victim_dir = tmp_path / "sink2"
    victim_dir.mkdir()
    rt = hermes_tools.Runtime({"builtin_toolsets": ["terminal"],
                               "terminal": {"cwd": str(tmp_path), "backend": "local"}})
    host_asked = []

    def host(req):
        host_asked.append(req)
        return "once"

    rt.set_approval_handler(host)
    try:
        a = _FdClient(rt, "a", lambda p: {"action": "decline"})
        b = _FdClient(rt, "b", lambda p: {"action": "decline"})
        a.close()
        a.srv.close()
        time.sleep(0.5)
        r = b.req("tools/call", {"name": "terminal", "arguments": {"command": f"rm -rf {victim_dir}"}})
        assert victim_dir.exists(), r
        assert len(b.asked) == 1, b.asked
        assert host_asked == [], host_asked
        b.close()
    finally:
        rt.close()


def test_an_execute_code_scripts_commands_are_asked_of_the_calling_client(tmp_path):
    # Red team 2026-11-28 (round 4): a script's inner terminal call
    # (tool_call_id "<outer>#1") was not found among the server's calls and
    # went to the host's handler, which approved what the client's user had
    # declined. And a host handler set after serving took every served
    # call over.
    victim_dir = tmp_path / "sinkB"
    victim_dir.mkdir()
    rt = hermes_tools.Runtime({"builtin_toolsets": ["terminal", "code_execution"],
                               "terminal": {"cwd": str(tmp_path), "backend": "local"}})
    host_asked = []
    try:
        c = _FdClient(rt, "c", lambda p: {"action": "decline"})
        # Set after serving: must not take the client's calls over.
        rt.set_approval_handler(lambda req: host_asked.append(req) or "once")
        code = f"from hermes_tools import terminal\nprint(terminal('rm -rf {victim_dir}'))"
        r = c.req("tools/call", {"name": "execute_code", "arguments": {"code": code}})
        assert victim_dir.exists(), r
        assert len(c.asked) == 1, c.asked
        assert host_asked == [], host_asked
        r = c.req("tools/call", {"name": "terminal", "arguments": {"command": f"rm -rf {victim_dir}"}})
        assert victim_dir.exists(), r
        assert host_asked == [], host_asked
        c.close()
    finally:
        rt.close()
