# SPDX-License-Identifier: GPL-2.0
# Shared rules for selftests/<target>/Makefile: set TEST_GEN_PROGS (names of
# single-file programs <name>.c) and per-program LDLIBS, then include this.

TOP      ?= $(abspath $(CURDIR)/../..)
BUILD    ?= $(TOP)/build
LINUXSRC ?= $(BUILD)/linux-src

TARGET   := $(notdir $(CURDIR))
OUT      := $(BUILD)/selftests/$(TARGET)
KSFT_DIR := $(LINUXSRC)/tools/testing/selftests
HARNESS  := $(KSFT_DIR)/kselftest_harness.h

CC       ?= cc
CFLAGS   := -std=gnu11 -O2 -g -Wall -Wextra -Werror -pthread \
	    -I$(TOP)/uapi -I$(TOP)/selftests/lib -isystem $(KSFT_DIR) $(EXTRA_CFLAGS)
LDLIBS   += -luring

NL_CFLAGS := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || \
		     echo -I/usr/include/libnl3)
NL_LIBS   := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || \
		     echo -lnl-genl-3 -lnl-3)

# Netlink events through libdfg (<dfg/events.h>, lib/dfg_evmon.h): a test
# that uses them sets CFLAGS_<prog> := $(EVENTS_CFLAGS) and LDLIBS_<prog>
# := $(EVENTS_LIBS). The static library keeps the tests free of libdfg.so.
EVENTS_CFLAGS := -I$(TOP)/libdfg/include $(NL_CFLAGS)
EVENTS_LIBS   := $(BUILD)/lib/libdfg.a $(NL_LIBS)

DEPS := $(TOP)/uapi/linux/dfg.h $(wildcard $(TOP)/selftests/lib/*.h) \
	$(HARNESS)

PROGS := $(addprefix $(OUT)/,$(TEST_GEN_PROGS))

.PHONY: all clean
all: $(PROGS)

$(OUT):
	mkdir -p $@

$(HARNESS):
	@echo "selftests: no $@; run 'make linux-src' at the top" >&2
	@false

$(OUT)/%: %.c $(DEPS) | $(OUT)
	$(CC) $(CFLAGS) $(CFLAGS_$*) -o $@ $< $(LDLIBS) $(LDLIBS_$*)

clean:
	rm -rf $(OUT)
