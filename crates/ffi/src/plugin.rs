//! Plugin libraries: shared objects named in the config's `plugins` that
//! export `ht_plugin_abi_version` (a `uint32_t`, `HT_PLUGIN_DECLARE_ABI` in
//! the header) and `ht_plugin_init`, which registers toolsets and tools
//! through the C ABI's own functions (a table of them, `ht_plugin_host`, so a
//! plugin links against nothing and works whether the library was loaded
//! with RTLD_LOCAL, linked statically or is a Rust test binary).
//!
//! This is the loader only: open, check the ABI, call init with every
//! registration it makes tied to the library (host.rs `while_loading`), so
//! the library stays mapped until the last of its callbacks and free
//! functions has run. The table's type lives with the exports in api.rs.

use std::ffi::{c_char, c_void};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hermes_core::error::{Error, ErrorKind};

use crate::host::while_loading;

/// The plugin ABI this library speaks: `HT_PLUGIN_ABI_VERSION` in the header.
pub const PLUGIN_ABI_VERSION: u32 = 1;

/// Room for the one-line message a failing `ht_plugin_init` writes.
const ERR_CAP: usize = 512;

/// `ht_plugin_init` as the loader calls it. ABI-identical to the header's
/// `ht_plugin_init_fn` (a pointer is a pointer; `ht_status` is an `int32_t`),
/// read as `i32` so that a stray value from foreign code is not an invalid
/// enum.
type InitFn = unsafe extern "C" fn(host: *const c_void, err: *mut c_char, err_cap: usize) -> i32;

/// A plugin that initialised: its path and the mapping its tools keep alive.
pub struct Plugin {
    pub path: PathBuf,
    _lib: Arc<libloading::Library>,
}

/// An opened library whose ABI matched and that exports `ht_plugin_init`.
pub struct Opened {
    pub path: PathBuf,
    lib: libloading::Library,
    init: InitFn,
}

fn fail(path: &Path, kind: ErrorKind, what: impl std::fmt::Display) -> Error {
    let one_line = what.to_string().replace(['\n', '\r'], " ");
    Error::new(kind, format!("plugin '{}': {one_line}", path.display()))
}

/// Open `path` and check it is a plugin for this ABI, without running its
/// init (what `hermes-tools doctor` does). Its static constructors run.
pub fn probe(path: &Path) -> Result<Opened, Error> {
    // dlopen searches the library path for a name without a slash: make it
    // the file the config names.
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    if !abs.is_file() {
        return Err(fail(path, ErrorKind::NotFound, "no such file"));
    }
    // SAFETY: loading a library runs its constructors, arbitrary code: the
    // host's config named this file as a plugin of this process, which is the
    // host's decision to trust it, as with any library it links. Nothing is
    // assumed of the library beyond what the symbol checks below establish.
    let lib = unsafe { libloading::Library::new(&abs) }.map_err(|e| {
        fail(
            path,
            ErrorKind::InvalidArgument,
            format!("cannot load: {e}"),
        )
    })?;
    // SAFETY: `ht_plugin_abi_version` is declared in the header as a
    // `const uint32_t` (HT_PLUGIN_DECLARE_ABI); we take its address as a
    // `*const u32` (no call is made through it), valid while `lib` is mapped.
    let abi_sym = unsafe { lib.get::<*const u32>(b"ht_plugin_abi_version\0") }.map_err(|_| {
        fail(
            path,
            ErrorKind::InvalidArgument,
            "not a hermes-tools plugin: it does not export ht_plugin_abi_version (HT_PLUGIN_DECLARE_ABI)",
        )
    })?;
    let abi_ptr: *const u32 = *abi_sym;
    if abi_ptr.is_null() {
        return Err(fail(
            path,
            ErrorKind::InvalidArgument,
            "ht_plugin_abi_version is NULL",
        ));
    }
    // SAFETY: non-NULL address of the plugin's exported `const uint32_t`
    // (aligned by its C type), mapped while `lib` lives; read once, by value.
    let abi = unsafe { abi_ptr.read() };
    if abi != PLUGIN_ABI_VERSION {
        return Err(fail(
            path,
            ErrorKind::Unsupported,
            format!(
                "built for plugin ABI {abi}, this library speaks {PLUGIN_ABI_VERSION}: rebuild it against this hermes_tools.h"
            ),
        ));
    }
    // SAFETY: a plugin of this ABI (checked above) exports `ht_plugin_init`
    // with the header's `ht_plugin_init_fn` signature, which `InitFn` matches
    // (see its doc). The fn pointer is used only while `lib` is mapped.
    let init = unsafe { lib.get::<InitFn>(b"ht_plugin_init\0") }
        .map(|s| *s)
        .map_err(|_| {
            fail(
                path,
                ErrorKind::InvalidArgument,
                "not a hermes-tools plugin: it does not export ht_plugin_init",
            )
        })?;
    Ok(Opened {
        path: path.to_path_buf(),
        lib,
        init,
    })
}

/// Load one plugin: probe it, then call its init with `host` (an
/// `ht_plugin_host*` the caller keeps valid during the call). Every
/// registration the init makes on this thread holds the library.
///
/// # Safety
/// `host` points at an `ht_plugin_host` whose pointers are valid for the
/// whole call (the runtime under construction, the C exports).
pub unsafe fn load(path: &Path, host: *const c_void) -> Result<Plugin, Error> {
    let Opened { path, lib, init } = probe(path)?;
    let lib = Arc::new(lib);
    let mut buf = vec![0u8; ERR_CAP];
    let keep: crate::host::KeepAlive = lib.clone();
    let code = while_loading(keep, || {
        // SAFETY: `init` comes from `lib`, mapped for this whole call (we
        // hold it); `host` is valid during the call (our caller's promise);
        // `buf` has ERR_CAP writable bytes and we pass one less, so a
        // terminating NUL is always there even if the plugin fills it. The
        // header forbids unwinding out of a plugin.
        unsafe { init(host, buf.as_mut_ptr() as *mut c_char, ERR_CAP - 1) }
    });
    if code != 0 {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let msg = String::from_utf8_lossy(&buf[..end]).trim().to_string();
        let msg = if msg.is_empty() {
            "no message".to_string()
        } else {
            msg
        };
        return Err(fail(
            &path,
            ErrorKind::InvalidArgument,
            format!("ht_plugin_init failed (status {code}): {msg}"),
        ));
    }
    tracing::info!("plugin '{}' loaded", path.display());
    Ok(Plugin { path, _lib: lib })
}
