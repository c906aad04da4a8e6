// Built against an installed hermes-tools with the C++ binding (tests/install/run.sh).
#include <hermes_tools.hpp>

#include <cstdio>
#include <cstring>

int main(int, char **argv) {
  try {
    hermes_tools::Runtime rt;
    rt.register_tool(hermes_tools::tool_spec("echo", "install", "Echo"),
                     [](const hermes_tools::Call &c) { return std::string(c.args_json()); });
    if (rt.dispatch("echo", R"({"x":1})") != R"({"x":1})") return 1;
    const char *slash = std::strrchr(argv[0], '/');
    std::printf("%s: ok (%s, C++)\n", slash ? slash + 1 : argv[0], hermes_tools::version().c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
