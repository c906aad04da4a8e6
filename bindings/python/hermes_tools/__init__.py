"""hermes_tools: Python binding of the hermes-tools C library (ctypes, no compiled extension).

    from hermes_tools import Runtime

    with Runtime() as rt:
        @rt.tool(toolset="weather")
        def get_weather(city: str, days: int = 1) -> dict:
            '''Weather forecast for a city.

            Args:
                city: City name.
                days: Number of days.
            '''
            return {"city": city, "forecast": "sunny"}

        print(rt.definitions())
        print(rt.dispatch("get_weather", {"city": "Lisbon"}))
"""

from ._ffi import ABI_VERSION, LibraryLoadError, lib
from ._ffi import has as lib_has
from ._runtime import (
    CANCELLED,
    CLOSED,
    CONFLICT,
    INTERNAL,
    INVALID_ARGUMENT,
    INVALID_JSON,
    INVALID_UTF8,
    NOT_FOUND,
    OK,
    PANIC,
    TIMEOUT,
    TOOL_ERROR,
    UNSUPPORTED,
    HermesToolsError,
    McpServer,
    Runtime,
    ToolCall,
    abi_version,
    command_check,
    features,
    set_log_handler,
    version,
)
from ._environment import Environment, Exec
from ._schema import function_schema, type_schema

__all__ = [
    "Environment",
    "Exec",
    "ABI_VERSION",
    "LibraryLoadError",
    "lib",
    "lib_has",
    "HermesToolsError",
    "McpServer",
    "Runtime",
    "ToolCall",
    "abi_version",
    "command_check",
    "features",
    "set_log_handler",
    "version",
    "function_schema",
    "type_schema",
    "OK",
    "INVALID_ARGUMENT",
    "INVALID_UTF8",
    "INVALID_JSON",
    "NOT_FOUND",
    "CONFLICT",
    "CLOSED",
    "CANCELLED",
    "TIMEOUT",
    "TOOL_ERROR",
    "PANIC",
    "INTERNAL",
    "UNSUPPORTED",
]

__version__ = "0.1.0"
