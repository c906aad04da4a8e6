# Packaging: make install PREFIX=/usr/local [DESTDIR=...] [PROFILE=release]
# installs
#   $(PREFIX)/lib/libhermes_tools.so, libhermes_tools.a
#   $(PREFIX)/include/hermes_tools.h, hermes_tools.hpp (C++ binding)
#   $(PREFIX)/lib/pkgconfig/hermes_tools.pc
#   $(PREFIX)/lib/cmake/hermes_tools/hermes_toolsConfig{,Version}.cmake
# PROFILE=debug (default) installs target/debug; PROFILE=release builds and
# installs target/release.
# make test-install installs into a temporary prefix and builds C/C++
# programs against that copy with pkg-config and with CMake, then runs them.

PROFILE    ?= debug
DESTDIR    ?=
INSTALL    ?= install
INSTALL_LIBDIR ?= $(PREFIX)/lib
INSTALL_INCDIR ?= $(PREFIX)/include
HT_VERSION_STR := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
HT_VERSION_MAJOR_STR := $(word 1,$(subst ., ,$(HT_VERSION_STR)))
HT_VERSION_MINOR_STR := $(word 2,$(subst ., ,$(HT_VERSION_STR)))
HT_ABI_STR := $(shell sed -n 's/^\#define HT_ABI_VERSION \([0-9]*\)/\1/p' include/hermes_tools.h)

ifeq ($(PROFILE),release)
INSTALL_FROM := target/release
INSTALL_DEP  := release
else
INSTALL_FROM := target/debug
INSTALL_DEP  := ht-lib
endif

HT_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(INSTALL_LIBDIR)|g' \
  -e 's|@INCLUDEDIR@|$(INSTALL_INCDIR)|g' -e 's|@VERSION@|$(HT_VERSION_STR)|g' \
  -e 's|@MAJOR@|$(HT_VERSION_MAJOR_STR)|g' -e 's|@MINOR@|$(HT_VERSION_MINOR_STR)|g' \
  -e 's|@ABI@|$(HT_ABI_STR)|g'

.PHONY: install uninstall test-install

install: $(INSTALL_DEP)
	$(INSTALL) -d $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools $(DESTDIR)$(INSTALL_INCDIR)
	$(INSTALL) -m 755 $(INSTALL_FROM)/libhermes_tools.so $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.so
	$(INSTALL) -m 644 $(INSTALL_FROM)/libhermes_tools.a $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.a
	$(INSTALL) -m 644 include/hermes_tools.h bindings/cpp/hermes_tools.hpp $(DESTDIR)$(INSTALL_INCDIR)/
	$(HT_SUBST) packaging/hermes_tools.pc.in > $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig/hermes_tools.pc
	$(HT_SUBST) packaging/hermes_toolsConfig.cmake.in > $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools/hermes_toolsConfig.cmake
	$(HT_SUBST) packaging/hermes_toolsConfigVersion.cmake.in > $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools/hermes_toolsConfigVersion.cmake
	@echo "installed hermes-tools $(HT_VERSION_STR) ($(PROFILE)) into $(DESTDIR)$(PREFIX)"

uninstall:
	rm -f $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.so $(DESTDIR)$(INSTALL_LIBDIR)/libhermes_tools.a \
	  $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools.h $(DESTDIR)$(INSTALL_INCDIR)/hermes_tools.hpp \
	  $(DESTDIR)$(INSTALL_LIBDIR)/pkgconfig/hermes_tools.pc
	rm -rf $(DESTDIR)$(INSTALL_LIBDIR)/cmake/hermes_tools

test-install: ht-lib
	tests/install/run.sh "$(CURDIR)/$(BUILD)/install-test"

BINDING_TESTS += test-install
