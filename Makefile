# dfg top-level build: the module (kbuild), libdfg, tools, selftests.
#
#   make            everything            make check   all tests (host + VM)
#   make module     dfg.ko                make demo    the main job, in the VM
#   make lib        libdfg.so/.a/.pc      make bench   benchmarks, in the VM
#   make tools      dfgctl, bench tools   make deps    install Debian packages
#   make examples   example programs
#   make selftests  kselftest binaries    make install module + library + tools
#   make stress     fuzzer, kills, leak and poison checks, one VM boot (<=10 min)
#   make replan-stress  10,000 random live re-plans, checked per key (hours)
#   make dkms-install  the module under dkms (both: DESTDIR= to stage)
#
# VERSION holds the one version of the module, library, tools and pages.
#
# KDIR=<dir> overrides the kernel build dir (default: tools/kdir.sh).

TOP      := $(CURDIR)
KDIR     ?= $(shell $(TOP)/tools/kdir.sh)
BUILD    := $(TOP)/build
PREFIX   ?= /usr/local
DESTDIR  ?=
LINUXSRC := $(BUILD)/linux-src
# The one version of everything (module, library, tools, man pages, dkms).
VERSION  := $(shell cat $(TOP)/VERSION)

export TOP BUILD PREFIX DESTDIR LINUXSRC

.PHONY: all module lib tools selftests examples linux-src check demo bench deps \
	stress replan-stress install uninstall dkms-install dkms-uninstall clean checkpatch sparse

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
		-f kmod/*.c kmod/*.h kmod/rdma/*.c kmod/tcp/*.c kmod/tcp/*.h \
		uapi/linux/dfg.h \
		uapi/linux/dfg_graph.h

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

# libdfg/tests/replan_module's random re-plans, 10,000 of them (make check
# runs 60): about 0.5 s a re-plan under TCG on a loaded host.
replan-stress: module lib linux-src
	$(MAKE) -C libdfg $(BUILD)/libdfg/tests/replan_module
	$(TOP)/tools/vm/dfg-vm --timeout 36000 -- \
		env DFG_REPLAN_TARGET=10000 $(BUILD)/libdfg/tests/replan_module

# KDIR's kernel release (the dfg-vm kernel's by default).
KVER = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	 $(KDIR)/include/generated/utsrelease.h)

# DESTDIR stages the whole install, the module included (kbuild calls it
# INSTALL_MOD_PATH); tools/pkg-test.sh checks the staged tree. Kbuild
# skips depmod without a System.map (as with Debian's headers), so the
# system install runs it for modprobe to find dfg.
install: all
	$(MAKE) -C $(KDIR) M=$(TOP) INSTALL_MOD_DIR=extra \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KVER))
	$(MAKE) -C libdfg install
	$(MAKE) -C tools install
	install -D -m 0644 uapi/linux/dfg.h $(DESTDIR)$(PREFIX)/include/linux/dfg.h
	install -D -m 0644 uapi/linux/dfg_graph.h \
		$(DESTDIR)$(PREFIX)/include/linux/dfg_graph.h

# Register the module with dkms, which rebuilds it for new kernels: its
# sources and a dkms.conf made from dkms.conf.in go to
# /usr/src/dfg-<version>. With DESTDIR, dkms works in trees under DESTDIR
# instead of the system's (its signing key included), for KDIR's kernel
# and without depmod: a check that changes nothing outside DESTDIR and
# loads nothing.
DKMS_SRC  := $(DESTDIR)/usr/src/dfg-$(VERSION)
DKMS_TREES = $(if $(DESTDIR),--sourcetree $(DESTDIR)/usr/src \
	       --dkmstree $(DESTDIR)/var/lib/dkms \
	       --installtree $(DESTDIR)/lib/modules)
DKMS_KERN  = $(if $(DESTDIR),-k $(KVER) --kernelsourcedir $(KDIR) --no-depmod)

dkms-install:
	rm -rf $(DKMS_SRC)
	mkdir -p $(DKMS_SRC)/kmod/rdma $(DKMS_SRC)/kmod/tcp $(DKMS_SRC)/uapi/linux
	cp Kbuild VERSION $(DKMS_SRC)/
	cp kmod/*.[ch] $(DKMS_SRC)/kmod/
	cp kmod/rdma/*.[ch] $(DKMS_SRC)/kmod/rdma/
	cp kmod/tcp/*.[ch] $(DKMS_SRC)/kmod/tcp/
	cp uapi/linux/dfg.h uapi/linux/dfg_graph.h $(DKMS_SRC)/uapi/linux/
	sed 's/@VERSION@/$(VERSION)/' dkms.conf.in > $(DKMS_SRC)/dkms.conf
	$(if $(DESTDIR),mkdir -p $(DESTDIR)/var/lib/dkms \
		$(DESTDIR)/lib/modules/$(KVER))
	$(if $(DESTDIR),mok_signing_key=$(DESTDIR)/var/lib/dkms/mok.key \
		mok_certificate=$(DESTDIR)/var/lib/dkms/mok.pub) \
		dkms install dfg/$(VERSION) $(DKMS_TREES) $(DKMS_KERN)

dkms-uninstall:
	dkms remove dfg/$(VERSION) --all $(DKMS_TREES)
	rm -rf $(DKMS_SRC)

uninstall:
	$(MAKE) -C libdfg uninstall
	$(MAKE) -C tools uninstall
	rm -f $(DESTDIR)$(PREFIX)/include/linux/dfg.h \
		$(DESTDIR)$(PREFIX)/include/linux/dfg_graph.h
	rm -f $(DESTDIR)/lib/modules/$(KVER)/extra/dfg.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/dfg_rdma.ko \
		$(DESTDIR)/lib/modules/$(KVER)/extra/dfg_tcp.ko
	$(if $(DESTDIR),,depmod -a $(KVER))

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf $(BUILD)
