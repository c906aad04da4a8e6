"""Agent-host example: the same scenario in every language binding.

1. create a runtime with the built-in terminal ({"builtin_toolsets": ["terminal"]}),
2. register a host tool (get_weather) from a typed Python function,
3. install the host's approval callback for dangerous commands,
4. print the tool schemas the model would see,
5. dispatch a model's tool_calls batch that includes a dangerous command,
   which the approval callback denies.

Run: make example-python
"""

import json
import subprocess
import sys

import hermes_tools
from hermes_tools import HermesToolsError, Runtime


def approve(request: dict) -> bool:
    """The host's approval callback: a real host would ask its user here."""
    command = request.get("untrusted_command_text", request.get("command"))
    print(f"  [approval] {command!r}: {request['verdict']} "
          f"({', '.join(r['description'] for r in request['reasons'])}) -> denied")
    return False


def make_runtime() -> tuple:
    try:
        return Runtime({"builtin_toolsets": ["terminal"]}), True
    except HermesToolsError as e:
        if e.status != hermes_tools.UNSUPPORTED:
            raise
        print(f"note: built-in terminal not in this build ({e.message}); using a host stand-in")
        return Runtime(), False


def register_terminal_stand_in(rt: Runtime) -> None:
    """Used only while the library build has no built-in terminal."""

    @rt.tool(toolset="terminal")
    def terminal(command: str, timeout: int = 30) -> dict:
        """Run a shell command and return its output.

        Args:
            command: The shell command to run.
            timeout: Seconds before the command is killed.
        """
        p = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=timeout)
        return {"output": p.stdout + p.stderr, "exit_code": p.returncode}


def install_approval_gate(rt: Runtime, builtin: bool) -> None:
    """Commands that need approval go to the host's approval callback."""
    if builtin and hermes_tools.lib_has("ht_runtime_set_approval_handler"):
        # The built-in terminal asks the library's approval handler itself.
        rt.set_approval_handler(approve)
        return
    # Older builds: analyse every terminal command with the library's rules in
    # a pre_tool_call hook and ask the same callback.

    def gate(event: dict):
        if event.get("tool_name") != "terminal":
            return {}
        command = event.get("args", {}).get("command", "")
        check = rt.command_check(command)
        if check["verdict"] == "allow":
            return {}
        request = {"command": command, "verdict": check["verdict"], "reasons": check["reasons"]}
        if check["verdict"] == "ask" and approve(request):
            return {}
        if check["verdict"] == "block":
            print(f"  [approval] {command!r}: blocked by rule {check['reasons'][0]['rule']}")
        return {"action": "block", "message": f"BLOCKED: the user denied `{command}`. Do not retry it."}

    rt.add_hook("pre_tool_call", gate)


def main() -> int:
    print(hermes_tools.version())
    rt, builtin = make_runtime()
    with rt:
        if not builtin:
            register_terminal_stand_in(rt)

        @rt.tool(toolset="weather", parallel_safe=True)
        def get_weather(city: str, days: int = 1) -> dict:
            """Weather forecast for a city.

            Args:
                city: City name, e.g. "Lisbon".
                days: Number of days to forecast.
            """
            return {"city": city, "days": days, "forecast": "sunny"}

        install_approval_gate(rt, builtin)

        print("\nschemas:")
        for d in rt.definitions():
            print("  " + json.dumps(d))

        tool_calls = [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Lisbon", "days": "2"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "terminal", "arguments": '{"command": "echo hello from the terminal"}'}},
            {"id": "call_3", "type": "function",
             "function": {"name": "terminal", "arguments": '{"command": "rm -rf /tmp/scratch"}'}},
        ]
        print("\ndispatching the model's tool_calls:")
        results = rt.dispatch_batch(tool_calls, context={"task_id": "demo"})
        print("\nresults for the model:")
        for r in results:
            print(f"  {r['tool_call_id']} {r['name']}: {r['content']}")

        denied = results[2]["content"]
        assert "error" in json.loads(denied) and "denied" in denied, denied
        assert json.loads(results[0]["content"])["forecast"] == "sunny"
    print("\nok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
