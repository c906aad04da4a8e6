// Agent-host example (C++): the same scenario in every language binding.
//
//  1. create a runtime with the built-in terminal ({"builtin_toolsets":["terminal"]}),
//  2. register a host tool (get_weather),
//  3. install the host's approval callback for dangerous commands,
//  4. print the tool schemas the model would see,
//  5. dispatch a model's tool_calls batch that includes a dangerous command
//     (`rm -rf /`), which the approval callback denies.
//
// Run: make example-cpp
#include "hermes_tools.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>

namespace ht = hermes_tools;

// Just enough JSON reading for this example: the string value of "key"
// (first occurrence), with the common escapes undone.
static std::string json_string_field(std::string_view json, std::string_view key) {
  std::string needle = "\"" + std::string(key) + "\":";
  size_t at = json.find(needle);
  if (at == std::string_view::npos) return {};
  at += needle.size();
  while (at < json.size() && json[at] == ' ') at++;
  if (at >= json.size() || json[at] != '"') return {};
  std::string out;
  for (size_t i = at + 1; i < json.size(); i++) {
    char c = json[i];
    if (c == '"') break;
    if (c == '\\' && i + 1 < json.size()) {
      char e = json[++i];
      out.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// The host's approval callback: a real host would ask its user here.
static bool approve(const std::string &command, const std::string &verdict, const std::string &why) {
  std::cout << "  [approval] '" << command << "': " << verdict << " (" << why << ") -> denied\n";
  return false;
}

// Every terminal command is analysed with the library's rules; anything not
// plainly safe goes to the host's approval callback.
static void install_approval_gate(ht::Runtime &rt) {
  rt.add_hook("pre_tool_call", [&rt](std::string_view event) -> std::string {
    if (json_string_field(event, "tool_name") != "terminal") return "{}";
    std::string command = json_string_field(event, "command");
    std::string check = rt.command_check(command);
    std::string verdict = json_string_field(check, "verdict");
    if (verdict == "allow") return "{}";
    if (approve(command, verdict, json_string_field(check, "description"))) return "{}";
    return R"({"action":"block","message":)" +
           ht::json_string("BLOCKED: the user denied `" + command + "`. Do not retry it.") + "}";
  });
}

// Used only while the library build has no built-in terminal.
static void register_terminal_stand_in(ht::Runtime &rt) {
  rt.register_tool(
      ht::tool_spec("terminal", "terminal", "Run a shell command and return its output.",
                    R"({"type":"object","properties":{"command":{"type":"string","description":"The shell command to run."}},"required":["command"]})"),
      [](const ht::Call &call) {
        std::string command = json_string_field(call.args_json(), "command") + " 2>&1";
        std::string output;
        FILE *p = popen(command.c_str(), "r");
        if (p == nullptr) throw std::runtime_error("cannot start the shell");
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
        int status = pclose(p);
        return R"({"output":)" + ht::json_string(output) + R"(,"exit_code":)" +
               std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + "}";
      });
}

static ht::Runtime make_runtime(bool &builtin) {
  try {
    builtin = true;
    return ht::Runtime(R"({"builtin_toolsets":["terminal"]})");
  } catch (const ht::Error &e) {
    if (e.status() != ht::Status::Unsupported) throw;
    std::cout << "note: built-in terminal not in this build (" << e.message() << "); using a host stand-in\n";
    builtin = false;
    return ht::Runtime();
  }
}

int main() {
  try {
    std::cout << ht::version() << "\n";
    bool builtin = true;
    ht::Runtime rt = make_runtime(builtin);
    if (!builtin) register_terminal_stand_in(rt);

    rt.register_tool(
        ht::tool_spec("get_weather", "weather", "Weather forecast for a city.",
                      R"({"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. \"Lisbon\"."},)"
                      R"("days":{"type":"integer","minimum":1,"description":"Number of days to forecast."}},"required":["city"]})",
                      /*parallel_safe=*/true),
        [](const ht::Call &call) {
          return R"({"city":)" + ht::json_string(json_string_field(call.args_json(), "city")) +
                 R"(,"forecast":"sunny"})";
        });

    install_approval_gate(rt);

    std::cout << "\nschemas:\n  " << rt.definitions() << "\n";

    const std::string tool_calls = R"([
      {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lisbon\", \"days\": \"2\"}"}},
      {"id":"call_2","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"echo hello from the terminal\"}"}},
      {"id":"call_3","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"rm -rf /\"}"}}])";
    std::cout << "\ndispatching the model's tool_calls:\n";
    std::string results = rt.dispatch_batch(tool_calls, R"({"task_id":"demo"})");
    std::cout << "\nresults for the model:\n  " << results << "\n";

    bool ok = results.find("sunny") != std::string::npos &&
              results.find("hello from the terminal") != std::string::npos &&
              results.find("denied `rm -rf /`") != std::string::npos;
    if (!ok) {
      std::cerr << "unexpected results\n";
      return 1;
    }
    std::cout << "\nok\n";
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
