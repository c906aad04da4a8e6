"""The client the official MCP conformance suite launches for its client
scenarios (`conformance client --command "python client_driver.py"`): a
host over the Python binding. The suite appends the server URL and names the
scenario in MCP_CONFORMANCE_SCENARIO (context, e.g. client credentials, in
MCP_CONFORMANCE_CONTEXT). The runtime does the MCP and OAuth work; this
host supplies only what a host supplies: the browser step (it follows the
authorization URL without a browser and hands back the redirect), the
elicitation answer (accept with nothing: the schema's defaults apply) and
the tool calls a scenario expects."""

import json
import os
import sys
import time
import urllib.error
import urllib.request

import hermes_tools


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browser(request: dict):
    """Follow the authorization URL as a browser would; the redirect it is
    sent to is the answer."""
    if request.get("kind") != "oauth_authorize":
        return {"error": "tokens live in memory here"}
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(request["authorization_url"], timeout=10)
    except urllib.error.HTTPError as e:
        if e.code in (301, 302, 303, 307, 308):
            return e.headers["Location"]
        return {"error": f"authorization endpoint answered {e.code}"}
    return {"error": "the authorization endpoint did not redirect"}


def sample_args(schema: dict) -> dict:
    """Arguments that fit a tool's schema: each required property a value
    of its type (the scenario servers check the call, not the numbers)."""
    samples = {"number": 1, "integer": 1, "string": "x", "boolean": True,
               "array": [], "object": {}}
    props = schema.get("properties", {})
    return {k: samples.get(props.get(k, {}).get("type"), "x")
            for k in schema.get("required", [])}


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    oauth = {"token_store": "memory", "timeout": 20}
    if context.get("client_id"):
        oauth["client_id"] = context["client_id"]
        if context.get("client_secret"):
            oauth["client_secret"] = context["client_secret"]
        if scenario.startswith("auth/client-credentials"):
            oauth["grant"] = "client_credentials"
    rt = hermes_tools.Runtime({})
    try:
        rt.set_oauth_handler(browser)
        rt.set_approval_handler(lambda req: {"choice": "once", "content": {}})
        rt.add_mcp_server("s", {"url": url, "connect_timeout": 20, "timeout": 20, "oauth": oauth})
        deadline = time.monotonic() + 25
        status = {}
        while time.monotonic() < deadline:
            status = rt.mcp_status().get("s", {})
            if status.get("state") in ("ready", "failed"):
                break
            time.sleep(0.05)
        if status.get("state") != "ready":
            print(f"not connected: {status.get('last_error')}", file=sys.stderr)
            return 1
        # Every scenario's server expects its tools called (auth scenarios
        # check that an authorized request went through).
        schemas = {d["function"]["name"]: d["function"].get("parameters", {})
                    for d in rt.definitions()}
        for tool in status.get("tools", []):
            out = rt.dispatch(tool, sample_args(schemas.get(tool, {})))
            print(f"{tool}: {out[:200]}")
        return 0
    finally:
        rt.close()


if __name__ == "__main__":
    sys.exit(main())
