// Agent-host example (C++): the same scenario in every language binding.
//
//  1. create a runtime with the built-in terminal ({"builtin_toolsets":["terminal"]}),
//  2. register a host tool (get_weather),
//  3. install the host's approval callback for dangerous commands,
//  4. print the tool schemas the model would see,
//  5. dispatch a model's tool_calls batch with two dangerous commands: one
//     the approval callback denies (`rm -rf /tmp/hermes-demo-scratch`), and
//     `rm -rf /`, which the library refuses without asking.
//
// Run: make example-cpp
#include "hermes_tools.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

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

// The top-level elements of a JSON array, as text (enough for printing).
static std::vector<std::string> split_json_array(std::string_view json) {
  std::vector<std::string> out;
  int depth = 0;
  bool in_string = false;
  size_t start = 0;
  for (size_t i = 0; i < json.size(); i++) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (depth++ == 0 && c == '[') start = i + 1;
    } else if (c == ']' || c == '}') {
      if (--depth == 0) out.emplace_back(json.substr(start, i - start));
    } else if (c == ',' && depth == 1) {
      out.emplace_back(json.substr(start, i - start));
      start = i + 1;
    }
  }
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

// The host's approval callback, asked by the library when a command needs
// approval (verdict "ask"). It runs on the library's callback thread while
// the command waits; a real host would ask its user here (and answer later
// with set_approval_handler_async). Block-tier commands such as `rm -rf /`
// never get here: the library refuses them outright.
static void install_approval_handler(ht::Runtime &rt) {
  rt.set_approval_handler([](std::string_view request) -> std::string {
    std::cout << "  [approval] '" << json_string_field(request, "untrusted_command_text")
              << "': " << json_string_field(request, "verdict") << " ("
              << json_string_field(request, "description") << ") -> denied\n";
    return R"({"choice":"deny"})";
  });
}

// Used only while the library build has no built-in terminal. It has no
// approval round trip, so it runs only commands the library's rules allow.
static void register_terminal_stand_in(ht::Runtime &rt) {
  rt.register_tool(
      ht::tool_spec("terminal", "terminal", "Run a shell command and return its output.",
                    R"({"type":"object","properties":{"command":{"type":"string","description":"The shell command to run."}},"required":["command"]})"),
      [&rt](const ht::Call &call) {
        std::string command = json_string_field(call.args_json(), "command");
        if (json_string_field(rt.command_check(command), "verdict") != "allow")
          throw std::runtime_error("BLOCKED: the stand-in terminal runs only commands that need no approval");
        std::string output;
        FILE *p = popen((command + " 2>&1").c_str(), "r");
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

    install_approval_handler(rt);

    std::cout << "\nschemas:\n";
    for (const auto &schema : split_json_array(rt.definitions())) std::cout << "  " << schema << "\n";

    const std::string tool_calls = R"([
      {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lisbon\", \"days\": \"2\"}"}},
      {"id":"call_2","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"echo hello from the terminal\"}"}},
      {"id":"call_3","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"rm -rf /tmp/hermes-demo-scratch\"}"}},
      {"id":"call_4","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"rm -rf /\"}"}}])";
    std::cout << "\ndispatching the model's tool_calls:\n";
    std::string results = rt.dispatch_batch(tool_calls, R"({"task_id":"demo"})");
    std::cout << "\nresults for the model:\n";
    for (const auto &r : split_json_array(results)) std::cout << "  " << r << "\n";

    bool ok = results.find("sunny") != std::string::npos &&
              results.find("hello from the terminal") != std::string::npos &&
              (!builtin || (results.find("the user denied") != std::string::npos &&
                            results.find("BLOCKED (hardline)") != std::string::npos));
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
