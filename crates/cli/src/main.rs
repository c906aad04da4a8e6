//! `hermes-tools`: the runtime from a shell. Judge commands the way the
//! approval engine does (for git hooks and CI), print the definitions a
//! model would get, call a tool through the full dispatch pipeline, and
//! check what a config needs. It uses the Rust API, not the C ABI.
//!
//! Exit status: 0 success (`check`: every command allowed), 1 failure (an
//! error result, a failed doctor check, a bad config), 2 usage error,
//! 3 `check`: some command needs approval, 4 `check`: some command is blocked.

mod call;
mod check;
mod doctor;
mod oauth;
mod out;
mod serve;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "hermes-tools",
    version,
    about = "The hermes-tools runtime from a shell: judge commands, list and call tools, check a config",
    after_help = "Exit status: 0 ok, 1 failure, 2 usage, 3 check: needs approval, 4 check: blocked."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Judge shell commands: allow, ask (needs approval) or block, with the
    /// rules that decided and why. One command per argument, or per line of
    /// standard input when none is given.
    Check {
        /// Print the full analysis as JSON (one object per line).
        #[arg(long)]
        json: bool,
        /// The commands to judge.
        commands: Vec<String>,
    },
    /// Print the tool definitions a model would get from a config.
    Definitions {
        /// The runtime config (JSON); none: no built-in tools.
        #[arg(long)]
        config: Option<PathBuf>,
        /// openai, anthropic or mcp.
        #[arg(long, default_value = "openai")]
        format: String,
        /// Toolsets to enable (repeat); none: every registered tool.
        #[arg(long = "enabled")]
        enabled: Vec<String>,
        /// Toolsets to disable (repeat).
        #[arg(long = "disabled")]
        disabled: Vec<String>,
    },
    /// Call one tool through the full pipeline (repair, validation, approval,
    /// timeouts, limits). Approval asks on the terminal when standard input is
    /// one, and fails closed otherwise.
    Call {
        /// The runtime config (JSON); none: no built-in tools.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Print `{"tool", "status", "result"}` as JSON.
        #[arg(long)]
        json: bool,
        /// The tool's name.
        tool: String,
        /// Its arguments as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// Check what a config needs (sandbox, directories, toolsets) and say
    /// what to fix.
    Doctor {
        /// The runtime config (JSON).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Serve the runtime to MCP clients.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Print the man page (roff) generated from these definitions.
    #[command(hide = true)]
    Man,
}

#[derive(Subcommand)]
enum McpCommand {
    /// Serve the config's tools as an MCP server on standard input and
    /// output (or streamable HTTP with --http): tools/list, tools/call
    /// through the full pipeline, cancellation, progress, list_changed,
    /// background processes as process://<id> resources; commands that need
    /// approval are asked about through elicitation, or blocked when the
    /// client cannot answer.
    Serve {
        /// The runtime config (JSON); none: the file named by the
        /// HERMES_TOOLS_CONFIG environment variable, else no built-in tools.
        /// Its `mcp_serve` object sets the server's limits and
        /// authentication (README, MCP server). `--config=FILE` works too.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Serve streamable HTTP on this loopback address (127.0.0.1:PORT;
        /// port 0 picks a free one) at /mcp instead of stdio. The address
        /// served, and the file holding the bearer token every request must
        /// carry, are printed on standard error.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// With --http: the bearer token is the first line of this file
        /// (at least 16 characters) instead of a generated one.
        #[arg(
            long,
            value_name = "FILE",
            requires = "http",
            conflicts_with = "no_auth"
        )]
        token_file: Option<PathBuf>,
        /// With --http: no authentication. Anyone who can reach the
        /// loopback port (every local user and process) can run commands.
        #[arg(long, requires = "http")]
        no_auth: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // The commands that run tools run a model's commands: make this process
    // non-dumpable first, so none of them (on the local backend, as this
    // user) can read its environment or memory or trace it, however it
    // finds its pid (hermes_exec::supervisor::protect_host).
    if matches!(cli.command, Command::Call { .. } | Command::Mcp { .. })
        && let Err(e) = hermes_exec::supervisor::protect_host()
    {
        eprintln!(
            "hermes-tools: warning: cannot make this process non-dumpable ({e}): a command of this user could read its environment"
        );
    }
    let code = match cli.command {
        Command::Check { json, commands } => check::run(json, commands),
        Command::Definitions {
            config,
            format,
            enabled,
            disabled,
        } => call::definitions(config.as_deref(), &format, &enabled, &disabled),
        Command::Call {
            config,
            json,
            tool,
            args,
        } => call::call(config.as_deref(), json, &tool, &args),
        Command::Doctor { config } => doctor::run(config.as_deref()),
        Command::Mcp {
            command:
                McpCommand::Serve {
                    config,
                    http,
                    token_file,
                    no_auth,
                },
        } => {
            // The MCP Inspector's CLI claims --config for itself: the
            // environment variable names the file instead.
            let config = config.or_else(|| {
                std::env::var_os("HERMES_TOOLS_CONFIG")
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            });
            serve::run(
                config.as_deref(),
                http.as_deref(),
                serve::Auth {
                    token_file,
                    no_auth,
                },
            )
        }
        Command::Man => {
            let man = clap_mangen::Man::new(<Cli as clap::CommandFactory>::command());
            match man.render(&mut std::io::stdout()) {
                Ok(()) => 0,
                Err(e) => out::fail(format!("man: {e}")),
            }
        }
    };
    ExitCode::from(code)
}
