# dfg top-level build: the module (kbuild), libdfg, tools, selftests.
#
#   make            everything            make check   all tests (host + VM)
#   make module     dfg.ko                make demo    the main job, in the VM
#   make lib        libdfg.so/.a/.pc      make bench   benchmarks, in the VM
#   make tools      dfgctl, bench tools   make deps    install Debian packages
#   make examples   example programs
#   make selftests  kselftest binaries    make install module + library + tools
#   make stress     fuzzer, kills, leak and poison checks, one VM boot (<=10 min)
#
# KDIR=<dir> overrides the kernel build dir (default: tools/kdir.sh).

TOP      := $(CURDIR)
KDIR     ?= $(shell $(TOP)/tools/kdir.sh)
BUILD    := $(TOP)/build
PREFIX   ?= /usr/local
DESTDIR  ?=
LINUXSRC := $(BUILD)/linux-src

export TOP BUILD PREFIX DESTDIR LINUXSRC

.PHONY: all module lib tools selftests examples linux-src check demo bench deps \
	stress install uninstall dkms-install dkms-uninstall clean checkpatch sparse

all: module lib tools selftests examples

module:
	$(MAKE) -C $(KDIR) M=$(TOP) W=1 modules

# Sparse over the module (C=2: check every file, not only rebuilt ones).
sparse:
	$(MAKE) -C $(KDIR) M=$(TOP) W=1 C=2 modules

lib:
	$(MAKE) -C libdfg

tools: lib
	$(MAKE) -C tools

examples: lib
	$(MAKE) -C examples

selftests: lib linux-src
	$(MAKE) -C selftests

# kselftest_harness.h and checkpatch.pl come from the distribution's kernel
# source package; unpacked into the build tree, never committed.
linux-src: $(LINUXSRC)/.stamp
$(LINUXSRC)/.stamp:
	$(TOP)/tools/linux-src.sh $(LINUXSRC)

checkpatch: linux-src
	perl $(LINUXSRC)/scripts/checkpatch.pl --no-tree --strict --terse \
		-f kmod/*.c kmod/*.h uapi/linux/dfg.h

# check, demo and bench install missing packages first, so each works as
# the first command on a fresh machine.
check:
	$(TOP)/tools/deps.sh
	$(MAKE) all
	$(TOP)/tools/check.sh

demo:
	$(TOP)/tools/deps.sh
	$(MAKE) all
	$(TOP)/tools/demo.sh

bench:
	$(TOP)/tools/deps.sh
	$(MAKE) all
	$(TOP)/tools/bench/host.sh

deps:
	$(TOP)/tools/deps.sh

# Not in check; DFG_STRESS_FUZZ_SECONDS, DFG_FUZZ_MESSAGES, DFG_FUZZ_SEED,
# DFG_STRESS_TEST...: see tools/stress.sh.
stress: module selftests
	$(TOP)/tools/stress.sh

install: all
	$(MAKE) -C $(KDIR) M=$(TOP) INSTALL_MOD_DIR=extra modules_install
	$(MAKE) -C libdfg install
	$(MAKE) -C tools install
	install -D -m 0644 uapi/linux/dfg.h $(DESTDIR)$(PREFIX)/include/linux/dfg.h

# Register the module with dkms, which rebuilds it for new kernels.
DKMS_VER := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dkms-install:
	rm -rf $(DESTDIR)/usr/src/dfg-$(DKMS_VER)
	mkdir -p $(DESTDIR)/usr/src/dfg-$(DKMS_VER)
	cp -r Kbuild dkms.conf kmod uapi $(DESTDIR)/usr/src/dfg-$(DKMS_VER)/
	dkms install dfg/$(DKMS_VER)

dkms-uninstall:
	dkms remove dfg/$(DKMS_VER) --all
	rm -rf $(DESTDIR)/usr/src/dfg-$(DKMS_VER)

uninstall:
	$(MAKE) -C libdfg uninstall
	$(MAKE) -C tools uninstall
	rm -f $(DESTDIR)$(PREFIX)/include/linux/dfg.h

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf $(BUILD)
