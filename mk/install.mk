# Packaging: make install [PREFIX=/usr/local] [DESTDIR=...] [LIBDIR_INSTALL=...]
# builds the release profile and installs
#   $(PREFIX)/lib/libhermes_tools.so.X.Y.Z   the library, stripped, SONAME from build.rs
#   $(PREFIX)/lib/.debug/libhermes_tools.so.X.Y.Z.debug   its debug info (gdb finds it by debuglink)
#   $(PREFIX)/lib/libhermes_tools.so.<ABI>   -> .so.X.Y.Z (the SONAME: 0.MINOR before 1.0)
#   $(PREFIX)/lib/libhermes_tools.so         -> the SONAME link (for -lhermes_tools)
#   $(PREFIX)/lib/libhermes_tools.a
#   $(PREFIX)/include/hermes_tools.h, hermes_tools.hpp (C++ binding)
#   $(PREFIX)/include/hermes_tools_features.h        HT_HAVE_* of this build (FEATURES)
#   $(PREFIX)/lib/pkgconfig/hermes_tools.pc          Libs carry -Wl,-rpath
#   $(PREFIX)/lib/cmake/hermes_tools/hermes_toolsConfig{,Version}.cmake
#   $(PREFIX)/bin/hermes-tools                       the command line (crates/cli)
#   $(PREFIX)/share/man/man1/hermes-tools.1          its man page (generated from clap)
# Programs built with pkg-config or CMake run without LD_LIBRARY_PATH: both
# add an rpath to the library folder unless it is one the loader searches
# anyway (/usr/lib, /lib, ...).
#
# make test-install: everything above into a scratch prefix, then a fresh C,
# C++, CMake, Go, Node and Python project outside the repository builds and
# runs against that copy only (tests/install/run.sh).

DESTDIR    ?=
INSTALL    ?= install
INSTALL_LIBDIR ?= $(PREFIX)/lib
INSTALL_INCDIR ?= $(PREFIX)/include
HT_VERSION_STR := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
HT_VERSION_MAJOR_STR := $(word 1,$(subst ., ,$(HT_VERSION_STR)))
HT_VERSION_MINOR_STR := $(word 2,$(subst ., ,$(HT_VERSION_STR)))
HT_ABI_STR := $(shell sed -n 's/^\#define HT_ABI_VERSION \([0-9]*\)/\1/p' include/hermes_tools.h)
HT_RELEASE_DIR := target/$(CARGO_PROFILE)
HT_RELEASE_LIB := $(HT_RELEASE_DIR)/libhermes_tools.so
HT_REAL_NAME   := libhermes_tools.so.$(HT_VERSION_STR)

# The loader's own folders need no rpath (and Debian policy forbids one there).
HT_SYSTEM_LIBDIRS := /lib /lib64 /usr/lib /usr/lib64 /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu \
  /lib/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu
HT_RPATH := $(if $(filter $(INSTALL_LIBDIR),$(HT_SYSTEM_LIBDIRS)),,-Wl,-rpath,$${libdir})

HT_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(INSTALL_LIBDIR)|g' \
  -e 's|@INCLUDEDIR@|$(INSTALL_INCDIR)|g' -e 's|@VERSION@|$(HT_VERSION_STR)|g' \
  -e 's|@MAJOR@|$(HT_VERSION_MAJOR_STR)|g' -e 's|@MINOR@|$(HT_VERSION_MINOR_STR)|g' \
  -e 's|@ABI@|$(HT_ABI_STR)|g' -e 's|@RPATH@|$(HT_RPATH)|g' \
  -e 's|@REAL_NAME@|$(HT_REAL_NAME)|g' -e "s|@SONAME@|$$soname|g"

# The SONAME is read from the built library (build.rs sets it), so the links
# made here can never disagree with what programs record as DT_NEEDED.
HT_READ_SONAME = soname=$$(readelf -d $(HT_RELEASE_LIB) | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p'); \
  if [ -z "$$soname" ]; then echo "install: $(HT_RELEASE_LIB) has no SONAME (is build.rs at the repository root?)" >&2; exit 1; fi

.PHONY: install uninstall test-install

install: release
	@$(HT_READ_SONAME); set -e; \
	$(INSTALL) -d $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools $(DESTDIR)$(INSTALL_INCDIR); \
	$(INSTALL) -d $(DESTDIR)$(INSTALL_LIBDIR)/.debug; \
	objcopy --only-keep-debug $(HT_RELEASE_LIB) $(DESTDIR)$(INSTALL_LIBDIR)/.debug/$(HT_REAL_NAME).debug; \
	chmod 644 $(DESTDIR)$(INSTALL_LIBDIR)/.debug/$(HT_REAL_NAME).debug; \
	objcopy --strip-unneeded --add-gnu-debuglink=$(DESTDIR)$(INSTALL_LIBDIR)/.debug/$(HT_REAL_NAME).debug \
	  $(HT_RELEASE_LIB) $(DESTDIR)$(INSTALL_LIBDIR)/$(HT_REAL_NAME); \
	chmod 755 $(DESTDIR)$(INSTALL_LIBDIR)/$(HT_REAL_NAME); \
	ln -sfn $(HT_REAL_NAME) $(DESTDIR)$(INSTALL_LIBDIR)/$$soname; \
	ln -sfn $$soname $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.so; \
	$(INSTALL) -m 644 $(HT_RELEASE_DIR)/libhermes_tools.a $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.a; \
	strip --strip-debug $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.a; \
	$(INSTALL) -m 644 include/hermes_tools.h bindings/cpp/hermes_tools.hpp $(DESTDIR)$(INSTALL_INCDIR)/; \
	scripts/features-header.py $(HT_RELEASE_LIB) > $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools_features.h; \
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/bin; \
	$(INSTALL) -m 755 -s $(HT_RELEASE_DIR)/hermes-tools $(DESTDIR)$(PREFIX)/bin/hermes-tools; \
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/share/man/man1; \
	$(HT_RELEASE_DIR)/hermes-tools man > $(DESTDIR)$(PREFIX)/share/man/man1/hermes-tools.1; \
	$(HT_SUBST) packaging/hermes_tools.pc.in > $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig/hermes_tools.pc; \
	$(HT_SUBST) packaging/hermes_toolsConfig.cmake.in > $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools/hermes_toolsConfig.cmake; \
	$(HT_SUBST) packaging/hermes_toolsConfigVersion.cmake.in > $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools/hermes_toolsConfigVersion.cmake; \
	echo "installed hermes-tools $(HT_VERSION_STR) (release, SONAME $$soname) into $(DESTDIR)$(PREFIX)"
	@# A system-wide install: refresh the loader cache so dlopen("libhermes_tools.so")
	@# (the Node and Python bindings' last resort) finds it at once.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/hermes-tools $(DESTDIR)$(PREFIX)/share/man/man1/hermes-tools.1
	rm -f $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.so $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.so.* \
	  $(DESTDIR)$(INSTALL_LIBDIR)/.debug/libhermes_tools.so.* $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools_features.h \
	  $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.a \
	  $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools.h $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools.hpp \
	  $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig/hermes_tools.pc
	rm -rf $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools

test-install: release | setup-check
	tests/install/run.sh

BINDING_TESTS += test-install
