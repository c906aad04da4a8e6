//! The seccomp filter bubblewrap installs (`--seccomp FD`) just before it
//! execs the sandboxed command: a classic-BPF program over `seccomp_data`
//! that refuses, with `EPERM`, the system calls a sandboxed command has no
//! business making and that would let it attack the host or the sandbox
//! itself (tracing, the mount family, new namespaces, kernel keyrings, BPF,
//! module loading, injecting input into a terminal, io_uring, whose
//! operations no filter sees), and any call that would make a file
//! set-user-ID or set-group-ID (`chmod`, `open(O_CREAT)`, `mknod` with mode
//! bits 06000): on a root host the sandbox's uid is root's, and a
//! set-user-ID copy of a shell left in the workspace would be a root shell
//! for every local user.
//!
//! Why by hand and not with `seccompiler`: that crate kills the process on
//! a foreign architecture and has no rule for x86_64's x32 system-call
//! numbers (`nr | 0x4000_0000`), through which `ptrace` and friends would
//! pass a filter keyed on the native numbers. The program below is short,
//! the same on every run (tests decode and evaluate it), and refuses both.
//!
//! Denied calls get `EPERM` (a clear "Operation not permitted", the program
//! goes on) rather than a kill; `clone3` gets `ENOSYS` because its flags sit
//! behind a pointer a filter cannot read, and on `ENOSYS` glibc, musl and Go
//! fall back to `clone`, whose namespace flags are checked.

/// `AUDIT_ARCH_X86_64` (`EM_X86_64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`).
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
/// `AUDIT_ARCH_AARCH64` (`EM_AARCH64 | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE`).
pub const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;

const EPERM: u32 = 1;
const ENOSYS: u32 = 38;
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
/// x86_64 numbers at or above this are the x32 ABI's.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// Namespace flags of `clone(2)` (all in the low 32 bits, the only bits the
/// kernel reads): NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
pub const CLONE_NS_FLAGS: u32 =
    0x0002_0000 | 0x0200_0000 | 0x0400_0000 | 0x0800_0000 | 0x1000_0000 | 0x2000_0000 | 0x4000_0000;
/// `TIOCSTI`: push a byte into a terminal's input queue (type a command
/// into the user's shell).
pub const TIOCSTI: u32 = 0x5412;
/// `TIOCLINUX`: the Linux console's multiplexer (selection paste included).
pub const TIOCLINUX: u32 = 0x541C;

// seccomp_data: nr (u32) at 0, arch (u32) at 4, instruction_pointer at 8,
// args[6] (u64 each) from 16. Both supported arches are little-endian, so
// an argument's low 32 bits are at 16 + 8 * i.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0_LO: u32 = 16;
const OFF_ARG1_LO: u32 = 24;

/// The low 32 bits of argument `i`.
const fn arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

/// `S_ISUID | S_ISGID`.
pub const SET_ID_BITS: u32 = 0o6000;
/// `O_CREAT | __O_TMPFILE`: the open flags under which the mode argument
/// is used (the same values on x86_64 and aarch64).
pub const O_CREATES: u32 = 0o100 | 0o20000000;

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

/// The system calls of one architecture the filter names.
pub struct Table {
    pub arch: u32,
    /// Denied outright with `EPERM` (name, number).
    pub denied: &'static [(&'static str, u32)],
    pub clone: u32,
    pub clone3: u32,
    /// `openat2`: `ENOSYS` (its mode sits behind a pointer; libcs fall
    /// back to `openat`, whose mode is checked).
    pub openat2: u32,
    pub ioctl: u32,
    /// Calls that take a file mode: (number, argument index of the open
    /// flags when the mode only counts with `O_CREAT`, argument index of
    /// the mode). Refused when the mode has [`SET_ID_BITS`].
    pub mode_calls: &'static [(u32, Option<u32>, u32)],
    /// Refuse the x32 numbers (x86_64 only).
    pub x32: bool,
}

/// x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl).
pub const X86_64: Table = Table {
    arch: AUDIT_ARCH_X86_64,
    denied: &[
        ("ptrace", 101),
        ("process_vm_readv", 310),
        ("process_vm_writev", 311),
        ("mount", 165),
        ("umount2", 166),
        ("pivot_root", 155),
        ("open_tree", 428),
        ("move_mount", 429),
        ("fsopen", 430),
        ("fsconfig", 431),
        ("fsmount", 432),
        ("fspick", 433),
        ("mount_setattr", 442),
        ("open_tree_attr", 467),
        ("unshare", 272),
        ("setns", 308),
        ("add_key", 248),
        ("request_key", 249),
        ("keyctl", 250),
        ("bpf", 321),
        ("perf_event_open", 298),
        ("userfaultfd", 323),
        ("kexec_load", 246),
        ("kexec_file_load", 320),
        ("init_module", 175),
        ("finit_module", 313),
        ("delete_module", 176),
        ("swapon", 167),
        ("swapoff", 168),
        ("reboot", 169),
        ("acct", 163),
        ("open_by_handle_at", 304),
        ("syslog", 103),
        ("io_uring_setup", 425),
        ("io_uring_enter", 426),
        ("io_uring_register", 427),
    ],
    clone: 56,
    clone3: 435,
    openat2: 437,
    ioctl: 16,
    mode_calls: &[
        (90, None, 1),     // chmod
        (91, None, 1),     // fchmod
        (268, None, 2),    // fchmodat
        (452, None, 2),    // fchmodat2
        (85, None, 1),     // creat
        (133, None, 1),    // mknod
        (259, None, 2),    // mknodat
        (2, Some(1), 2),   // open
        (257, Some(2), 3), // openat
    ],
    x32: true,
};

/// aarch64 numbers (the generic table, include/uapi/asm-generic/unistd.h).
pub const AARCH64: Table = Table {
    arch: AUDIT_ARCH_AARCH64,
    denied: &[
        ("ptrace", 117),
        ("process_vm_readv", 270),
        ("process_vm_writev", 271),
        ("mount", 40),
        ("umount2", 39),
        ("pivot_root", 41),
        ("open_tree", 428),
        ("move_mount", 429),
        ("fsopen", 430),
        ("fsconfig", 431),
        ("fsmount", 432),
        ("fspick", 433),
        ("mount_setattr", 442),
        ("open_tree_attr", 467),
        ("unshare", 97),
        ("setns", 268),
        ("add_key", 217),
        ("request_key", 218),
        ("keyctl", 219),
        ("bpf", 280),
        ("perf_event_open", 241),
        ("userfaultfd", 282),
        ("kexec_load", 104),
        ("kexec_file_load", 294),
        ("init_module", 105),
        ("finit_module", 273),
        ("delete_module", 106),
        ("swapon", 224),
        ("swapoff", 225),
        ("reboot", 142),
        ("acct", 89),
        ("open_by_handle_at", 265),
        ("syslog", 116),
        ("io_uring_setup", 425),
        ("io_uring_enter", 426),
        ("io_uring_register", 427),
    ],
    clone: 220,
    clone3: 435,
    openat2: 437,
    ioctl: 29,
    mode_calls: &[
        (52, None, 1),    // fchmod
        (53, None, 2),    // fchmodat
        (452, None, 2),   // fchmodat2
        (33, None, 2),    // mknodat
        (56, Some(2), 3), // openat
    ],
    x32: false,
};

/// The table of the architecture this library was built for, if supported.
pub fn native_table() -> Option<&'static Table> {
    if cfg!(target_arch = "x86_64") {
        Some(&X86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(&AARCH64)
    } else {
        None
    }
}

/// One classic-BPF instruction (`struct sock_filter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

const fn stmt(code: u16, k: u32) -> Insn {
    Insn {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

const fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
}

/// The filter for `t` as instructions. Every jump is forward and short (at
/// most a few instructions), so no offset can overflow its byte.
pub fn instructions(t: &Table) -> Vec<Insn> {
    let deny = stmt(RET_K, RET_ERRNO | EPERM);
    let mut p = vec![
        stmt(LD_W_ABS, OFF_ARCH),
        // A call made through another ABI of the same CPU (i386's int 0x80
        // on x86_64) has other numbers: refuse all of them.
        jump(JEQ_K, t.arch, 1, 0),
        deny,
        stmt(LD_W_ABS, OFF_NR),
    ];
    if t.x32 {
        p.extend([jump(JGE_K, X32_SYSCALL_BIT, 0, 1), deny]);
    }
    for &(_, nr) in t.denied {
        p.extend([jump(JEQ_K, nr, 0, 1), deny]);
    }
    p.extend([
        jump(JEQ_K, t.clone3, 0, 1),
        stmt(RET_K, RET_ERRNO | ENOSYS),
        jump(JEQ_K, t.openat2, 0, 1),
        stmt(RET_K, RET_ERRNO | ENOSYS),
    ]);
    // Calls with a mode: refuse the set-id bits. Each block ends in an
    // allow of its own (its call is decided), so every jump stays short.
    for &(nr, flags, mode) in t.mode_calls {
        match flags {
            Some(f) => p.extend([
                jump(JEQ_K, nr, 0, 6),
                stmt(LD_W_ABS, arg_lo(f)),
                jump(JSET_K, O_CREATES, 0, 3),
                stmt(LD_W_ABS, arg_lo(mode)),
                jump(JSET_K, SET_ID_BITS, 0, 1),
                deny,
                stmt(RET_K, RET_ALLOW),
            ]),
            None => p.extend([
                jump(JEQ_K, nr, 0, 4),
                stmt(LD_W_ABS, arg_lo(mode)),
                jump(JSET_K, SET_ID_BITS, 0, 1),
                deny,
                stmt(RET_K, RET_ALLOW),
            ]),
        }
    }
    p.extend([
        // clone: refuse any namespace flag.
        jump(JEQ_K, t.clone, 0, 4),
        stmt(LD_W_ABS, OFF_ARG0_LO),
        jump(JSET_K, CLONE_NS_FLAGS, 0, 1),
        deny,
        stmt(RET_K, RET_ALLOW),
        // ioctl: the request is an unsigned int (the low 32 bits).
        jump(JEQ_K, t.ioctl, 0, 4),
        stmt(LD_W_ABS, OFF_ARG1_LO),
        jump(JEQ_K, TIOCSTI, 1, 0),
        jump(JEQ_K, TIOCLINUX, 0, 1),
        deny,
        stmt(RET_K, RET_ALLOW),
    ]);
    p
}

/// The program as the bytes bubblewrap reads (`struct sock_filter[]`, in
/// the machine's byte order).
pub fn program(t: &Table) -> Vec<u8> {
    let mut out = Vec::new();
    for i in instructions(t) {
        out.extend_from_slice(&i.code.to_ne_bytes());
        out.push(i.jt);
        out.push(i.jf);
        out.extend_from_slice(&i.k.to_ne_bytes());
    }
    out
}

/// Run `prog` as the kernel would on one system call and return its verdict
/// (only the instructions [`instructions`] emits are understood).
pub fn evaluate(prog: &[Insn], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    // Only the low halves of arguments are ever loaded (little-endian).
    let word = |off: u32| -> u32 {
        match off {
            OFF_NR => nr,
            OFF_ARCH => arch,
            o if (16..64).contains(&o) && (o - 16) % 8 == 0 => args[((o - 16) / 8) as usize] as u32,
            o if (16..64).contains(&o) => (args[((o - 20) / 8) as usize] >> 32) as u32,
            _ => 0,
        }
    };
    let mut acc = 0u32;
    let mut pc = 0usize;
    while pc < prog.len() {
        let i = prog[pc];
        pc += 1;
        match i.code {
            LD_W_ABS => acc = word(i.k),
            RET_K => return i.k,
            JEQ_K | JGE_K | JSET_K => {
                let taken = match i.code {
                    JEQ_K => acc == i.k,
                    JGE_K => acc >= i.k,
                    _ => acc & i.k != 0,
                };
                pc += usize::from(if taken { i.jt } else { i.jf });
            }
            _ => panic!("unknown BPF instruction {i:?}"),
        }
    }
    panic!("BPF program fell off its end");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(t: &Table, nr: u32, args: [u64; 6]) -> u32 {
        evaluate(&instructions(t), t.arch, nr, args)
    }

    #[test]
    fn denied_calls_get_eperm_and_others_pass() {
        for t in [&X86_64, &AARCH64] {
            for &(name, nr) in t.denied {
                assert_eq!(verdict(t, nr, [0; 6]), RET_ERRNO | EPERM, "{name}");
            }
            // read, write, openat, execve are allowed on both.
            for nr in [0u32, 1, 56, 63, 64, 221, 257, 59] {
                if t.denied.iter().any(|&(_, d)| d == nr) || nr == t.clone || nr == t.ioctl {
                    continue;
                }
                assert_eq!(verdict(t, nr, [0; 6]), RET_ALLOW, "nr {nr}");
            }
        }
    }

    #[test]
    fn clone_with_a_namespace_flag_is_refused_clone3_falls_back() {
        for t in [&X86_64, &AARCH64] {
            // fork-like and thread-like clones pass.
            assert_eq!(verdict(t, t.clone, [0x11, 0, 0, 0, 0, 0]), RET_ALLOW);
            assert_eq!(verdict(t, t.clone, [0x3d0f00, 0, 0, 0, 0, 0]), RET_ALLOW);
            for flag in [0x1000_0000u64, 0x2_0000, 0x4000_0000, 0x2000_0000] {
                assert_eq!(
                    verdict(t, t.clone, [flag | 0x11, 0, 0, 0, 0, 0]),
                    RET_ERRNO | EPERM
                );
            }
            assert_eq!(verdict(t, t.clone3, [0; 6]), RET_ERRNO | ENOSYS);
        }
    }

    #[test]
    fn terminal_injection_ioctls_are_refused_even_with_high_bits_set() {
        for t in [&X86_64, &AARCH64] {
            for req in [
                TIOCSTI as u64,
                TIOCLINUX as u64,
                0xdead_0000_0000_0000 | TIOCSTI as u64,
            ] {
                assert_eq!(verdict(t, t.ioctl, [0, req, 0, 0, 0, 0]), RET_ERRNO | EPERM);
            }
            // TCGETS (isatty) passes.
            assert_eq!(verdict(t, t.ioctl, [0, 0x5401, 0, 0, 0, 0]), RET_ALLOW);
        }
    }

    /// Red team 2026-11-28: a root host's sandbox made a set-user-ID copy
    /// of bash in the workspace (python's os.chmod, not the `chmod 4755`
    /// the approval rules name): any local user then got a root shell.
    #[test]
    fn set_id_modes_are_refused_in_every_call_that_takes_a_mode() {
        for t in [&X86_64, &AARCH64] {
            for &(nr, flags, mode) in t.mode_calls {
                let mut args = [0u64; 6];
                if let Some(f) = flags {
                    args[f as usize] = 0o100 | 0o1; // O_CREAT | O_WRONLY
                }
                for bits in [0o4755u64, 0o2755, 0o6777, 0xffff_0000_0000_0800] {
                    args[mode as usize] = bits;
                    assert_eq!(
                        verdict(t, nr, args),
                        RET_ERRNO | EPERM,
                        "nr {nr} mode {bits:o}"
                    );
                }
                for ok in [0o755u64, 0o644, 0o1777] {
                    args[mode as usize] = ok;
                    assert_eq!(verdict(t, nr, args), RET_ALLOW, "nr {nr} mode {ok:o}");
                }
                // Without O_CREAT an open's mode is not used: never refused.
                if let Some(f) = flags {
                    args[f as usize] = 0o2; // O_RDWR
                    args[mode as usize] = 0o4755;
                    assert_eq!(verdict(t, nr, args), RET_ALLOW, "nr {nr} without O_CREAT");
                }
            }
            assert_eq!(verdict(t, t.openat2, [0; 6]), RET_ERRNO | ENOSYS);
            for nr in [425u32, 426, 427] {
                assert_eq!(verdict(t, nr, [0; 6]), RET_ERRNO | EPERM, "io_uring {nr}");
            }
        }
    }

    #[test]
    fn foreign_abis_are_refused() {
        // i386's ptrace is 26; through int 0x80 the arch is AUDIT_ARCH_I386.
        assert_eq!(
            evaluate(&instructions(&X86_64), 0x4000_0003, 26, [0; 6]),
            RET_ERRNO | EPERM
        );
        // x32's ptrace (521 | X32_SYSCALL_BIT) under the x86_64 arch.
        assert_eq!(
            verdict(&X86_64, X32_SYSCALL_BIT | 521, [0; 6]),
            RET_ERRNO | EPERM
        );
    }

    #[test]
    fn program_bytes_are_sock_filter_records() {
        let bytes = program(&X86_64);
        assert_eq!(bytes.len(), instructions(&X86_64).len() * 8);
        assert!(bytes.len() / 8 < 4096, "BPF_MAXINSNS");
    }
}
