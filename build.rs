// Build script of the C artifact (libhermes_tools): gives the release
// cdylib a versioned SONAME so installed programs record
// `libhermes_tools.so.<major>` and survive a compatible upgrade.
//
// Why only the release profile: `make install` installs the release build,
// and a debug cdylib with a SONAME would break every in-tree C, C++ and Go
// test that links `-L target/debug -lhermes_tools` (they would record
// `libhermes_tools.so.0`, which cargo never writes into target/debug).
// Bench builds inherit the release profile; they link the rlib, so the
// SONAME does not matter there.
//
// The SONAME's version part follows the workspace version: before 1.0 every
// minor version is an ABI boundary (c-abi-conventions.md §11), so 0.MINOR
// becomes `libhermes_tools.so.0.MINOR`; from 1.0 on it is the major only.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let profile = std::env::var("PROFILE").unwrap_or_default();
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if profile != "release" || target_os != "linux" {
        return;
    }
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_else(|_| "0".into());
    let soname = if major == "0" {
        format!("libhermes_tools.so.0.{minor}")
    } else {
        format!("libhermes_tools.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
}
