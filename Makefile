# SPDX-License-Identifier: GPL-2.0
#
# kcc top-level Makefile.  Userspace tools and tests are built here; the
# kernel module is built through Kbuild (make module).
#
#   make            tools (build/kcc)
#   make check      every selftest under AddressSanitizer + UBSan, TAP
#   make bench      k-SF / CCT construction benchmark (prints figures)
#   make bench-ppp  watched-context counting against the k-SF (figures)
#   make eval       k-CCF accuracy of sampled profiles on real programs
#   make module     kcc.ko against KDIR (default: the installed headers)
#   make demo       the main job (see README.md)
#   make static     sparse, checkpatch --strict, cppcheck, clang-tidy, layers
#   make fuzz       parser fuzzers, FUZZ_SECONDS each (default 20)
#   make fuzz-guest /dev/kcc fuzzer on the debug kernel (FUZZ_ITERS, FUZZ_SEED)
#   make check-kcsan the guest suite and session storms on the KCSAN kernel
#
#   make install       kcc, kccread and the man pages (DESTDIR, prefix)
#   make install-dkms  kcc.ko's sources for DKMS under /usr/src
#   make deb           Debian packages kcc and kcc-dkms in build/deb
#   make check-deb     install them on a clean Debian 12 root, dkms build
#   make check-demo    make demo on a fresh Debian 12 root, timed
#
# Quiet unless V=1.  DESTDIR and prefix are honoured by make install.
# KCC_WERROR=1 turns warnings into errors, in the tools and in kcc.ko's
# Kbuild; CI sets it (.ci/run), a default or packaged build does not.

.DELETE_ON_ERROR:
.SUFFIXES:

ifeq ($(V),1)
Q :=
else
Q := @
endif

CC	?= gcc
prefix	?= /usr/local
bindir	?= $(prefix)/bin
O	?= build

KCC_WERROR ?=
export KCC_WERROR
WARN	 := -Wall -Wextra $(if $(filter 1,$(KCC_WERROR)),-Werror) -Wshadow \
	    -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
# user/lib: the library (stream, profile, symbols, k-CCF, traces);
# user/report: the report model and its formats; user/harness: the
# fidelity and simulation harness (Documentation/layout.rst).
USER_DIRS   := user/lib user/report user/harness
USER_INC    := $(addprefix -I,$(USER_DIRS))
# -fno-strict-aliasing as the kernel builds lbr/: the core reuses its
# stitcher's frame scratch for the weights of a burst (kcc_stitch.c).
BASE_CFLAGS := -std=gnu11 -g $(WARN) -Iinclude/uapi -Ilbr $(USER_INC) \
	    -D_GNU_SOURCE -fno-strict-aliasing
OPT_CFLAGS  := -O2
SAN_CFLAGS  := -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	    -fno-sanitize-recover=all
# libpfm4: hardware event names for kcc record -e (user/lib/evspec.c);
# libiberty: demangling; libdl: the debuginfod client is dlopen()ed;
# capstone: the direct calls of a program (kcc valence annotate).
LDLIBS	+= -lm -ldw -lelf -lz -lpfm -liberty -ldl -lcapstone

LBR_SRCS   := $(wildcard lbr/*.c)
UTIL_SRCS  := $(wildcard $(addsuffix /*.c,$(USER_DIRS)))
CMD_SRCS   := $(filter-out user/kccread.c,$(wildcard user/*.c))
TEST_SRCS  := $(wildcard selftests/kcc/*.c)
BENCH_SRCS := $(wildcard bench/*.c)
HDRS	   := $(wildcard lbr/*.h $(addsuffix /*.h,$(USER_DIRS)) include/uapi/linux/*.h \
		selftests/kcc/*.h)

# Two flavours of every object: optimised (tools, bench) and sanitized
# (everything make check runs).
opt_obj = $(patsubst %.c,$(O)/opt/%.o,$(1))
san_obj = $(patsubst %.c,$(O)/san/%.o,$(1))

$(O)/opt/%.o: %.c $(HDRS) $(O)/cflags
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(OPT_CFLAGS) $(CFLAGS) -c -o $@ $<

$(O)/san/%.o: %.c $(HDRS) $(O)/cflags
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) $(CFLAGS) -c -o $@ $<

CORE_OPT := $(call opt_obj,$(LBR_SRCS) $(UTIL_SRCS))
CORE_SAN := $(call san_obj,$(LBR_SRCS) $(UTIL_SRCS))

.PHONY: all
all: $(O)/kcc $(O)/kccread

# Objects are rebuilt when the flags change (KCC_WERROR, CFLAGS): the
# flags are kept in $(O)/cflags, rewritten only when they differ.
FLAGS_NOW := $(WARN) $(CFLAGS)
$(O)/cflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' >$@

.PHONY: FORCE
FORCE:

$(O)/kcc: $(call opt_obj,$(CMD_SRCS)) $(CORE_OPT)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(OPT_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/san/kcc: $(call san_obj,$(CMD_SRCS)) $(CORE_SAN)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# kccread: the device reader, a binary of its own (Documentation/man/kccread.1).
$(O)/kccread: $(O)/opt/user/kccread.o $(CORE_OPT)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(OPT_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(O)/san/kccread: $(O)/san/user/kccread.o $(CORE_SAN)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# kcc linked statically, for the guest's initramfs that has no C library
# (make static-kcc; selftests/kcc/guest.sh runs kcc record in the guest).
# libdw.a needs the decompressors it was built with.  Its debuginfod
# client, and kcc's (user/lib/debuginfod.c), dlopen() a library that the
# guest lacks: those warnings of the static link are expected and
# dropped, any other is shown.  So is getaddrinfo()'s (kcc serve --push):
# a static kcc reaches a numeric address anywhere, a host name only where
# the NSS libraries of the glibc it was linked with are installed.
STATIC_LDLIBS := -lm -ldw -lelf -lz -liberty -llzma -lbz2 -lpfm -lpthread -lcapstone
.PHONY: static-kcc
static-kcc: $(O)/static/kcc

$(O)/static/kcc: $(call opt_obj,$(CMD_SRCS)) $(CORE_OPT)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) -static $(OPT_CFLAGS) $(LDFLAGS) -o $@ $^ $(STATIC_LDLIBS) \
		2>$@.ld || { cat $@.ld >&2; rm -f $@.ld; exit 1; }
	$(Q)grep -v -e "Using 'dlopen' in statically linked" \
		-e "in function \`__libdwfl_debuginfod_init" \
		-e "debuginfod.o: in function \`client'" \
		-e "Using 'getaddrinfo' in statically linked" \
		-e "builtin-serve.o: in function \`push_child_send'" \
		$@.ld >&2; rm -f $@.ld

# Each selftests/kcc/<name>.c is one test program.
TEST_BINS := $(patsubst selftests/kcc/%.c,$(O)/san/selftests/%,$(TEST_SRCS))
$(O)/san/selftests/%: $(O)/san/selftests/kcc/%.o $(CORE_SAN)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(SAN_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

BENCH_BINS := $(patsubst bench/%.c,$(O)/opt/bench/%,$(BENCH_SRCS))
$(O)/opt/bench/%: $(O)/opt/bench/%.o $(CORE_OPT)
	$(if $(Q),@echo "  LD      $@")
	$(Q)$(CC) $(OPT_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The guest suite runs kcc record when the static libraries exist.
STATIC_LIBS := $(foreach l,dw elf z lzma bz2 pfm,$(filter /%, \
		$(shell $(CC) -print-file-name=lib$(l).a)))
STATIC_KCC := $(if $(word 6,$(STATIC_LIBS)),$(O)/static/kcc)
.PHONY: check
check: $(O)/san/kcc $(O)/san/kccread $(TEST_BINS) $(STATIC_KCC) $(BENCH_BINS)
	$(Q)KCC=$(abspath $(O)/san/kcc) KCCREAD=$(abspath $(O)/san/kccread) \
		KCC_BENCH=$(abspath $(O)/opt/bench/bench_ksf) \
		KCC_STATIC=$(if $(STATIC_KCC),$(abspath $(STATIC_KCC))) \
		KCC_TESTBIN=$(abspath $(O)/san/selftests) \
		KCC_ARTIFACTS=$(abspath $(O)/artifacts) \
		KDIR="$(KDIR_GIVEN)" KCC_DEFAULT_KDIR="$(KDIR)" \
		sh selftests/run_tests.sh

# Userspace tests only: the kernel build and guest tests skip.
.PHONY: check-user
check-user: export KCC_USER_ONLY := 1
check-user: check

# make check with two CPU-bound processes beside it, as on a shared CI
# machine (scripts/loaded.sh; KCC_LOAD_PROCS sets how many).
.PHONY: check-loaded
check-loaded:
	$(Q)sh scripts/loaded.sh $(MAKE) check

# How often each guest test fails, plain and loaded (scripts/flaky.sh;
# FLAKY_ARGS, e.g. "-n 5 -k 6.1 -a kccmode=lbr").  Hours: not in CI.
# "-s" runs the whole guest suite of make check (kcc record's runs too).
FLAKY_ARGS ?=
.PHONY: flaky
flaky: $(O)/san/kcc $(O)/san/kccread $(STATIC_KCC)
	$(Q)KCC=$(abspath $(O)/san/kcc) KCCREAD=$(abspath $(O)/san/kccread) \
		KCC_STATIC=$(if $(STATIC_KCC),$(abspath $(STATIC_KCC))) \
		sh scripts/flaky.sh $(FLAKY_ARGS)

# ---- fuzzing (clang libFuzzer): the stream, profile, perf.data and watch-file parsers
FUZZ_CC	     ?= clang
FUZZ_TIME    ?= 20
FUZZ_SECONDS ?= $(FUZZ_TIME)
FUZZ_SRCS := $(wildcard fuzz/*_fuzz.c)
FUZZ_BINS := $(patsubst fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
FUZZ_TARGETS := $(patsubst fuzz/%_fuzz.c,%,$(FUZZ_SRCS))

$(O)/fuzz/%: fuzz/%.c $(LBR_SRCS) $(UTIL_SRCS) $(HDRS)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) -std=gnu11 -g -O1 -Iinclude/uapi -Ilbr $(USER_INC) \
		-D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -o $@ $< $(LBR_SRCS) $(UTIL_SRCS) $(LDLIBS)

# FUZZ_SECONDS per target.  Each starts from the corpus kept in
# fuzz/corpus/<target> (small: coverage-minimised inputs) plus streams
# and profiles made from the selftest traces; what it finds goes to
# $(O)/fuzz/corpus-<target>.  make fuzz-merge folds that back into
# fuzz/corpus/ keeping only inputs that add coverage.
.PHONY: fuzz fuzz-merge
fuzz: $(FUZZ_BINS) $(O)/kcc
	$(Q)for t in $(FUZZ_TARGETS); do mkdir -p $(O)/fuzz/corpus-$$t || exit 1; done
	$(Q)for k in 1 2 3; do \
		$(O)/kcc record --trace selftests/kcc/data/fig2.trace -k $$k \
			--threads 2 --stream -o $(O)/fuzz/corpus-stream/fig2-k$$k && \
		$(O)/kcc record --trace selftests/kcc/data/fig2.trace -k $$k \
			-o $(O)/fuzz/corpus-profile/fig2-k$$k || exit 1; done
	$(Q)for t in $(FUZZ_TARGETS); do \
		$(O)/fuzz/$${t}_fuzz -max_total_time=$(FUZZ_SECONDS) \
			-max_len=16384 -rss_limit_mb=2048 -print_final_stats=1 \
			$(O)/fuzz/corpus-$$t fuzz/corpus/$$t || exit 1; done

fuzz-merge: $(FUZZ_BINS)
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/corpus/$$t && \
		$(O)/fuzz/$${t}_fuzz -merge=1 -max_len=16384 fuzz/corpus/$$t \
			$(O)/fuzz/corpus-$$t || exit 1; done

.PHONY: demo
demo:
	$(Q)sh scripts/demo.sh $(O)

.PHONY: deps
deps:
	$(Q)sh scripts/deps.sh

.PHONY: bench
bench: $(BENCH_BINS)
	$(Q)BENCH=$(O)/opt/bench/bench_ksf sh bench/run.sh $(BENCH_ARGS)

# Watched contexts (Documentation/ppp.rst) on the traces make eval records.
.PHONY: bench-ppp
bench-ppp: $(O)/kcc $(O)/opt/bench/bench_ppp
	$(Q)KCC=$(O)/kcc BENCH_PPP=$(O)/opt/bench/bench_ppp sh bench/ppp.sh $(BENCH_ARGS)

# The tracing runtime for programs built with -finstrument-functions
# (tools/kcc-trace), and the fidelity evaluation that uses it
# (Documentation/fidelity.rst): fetches Debian sources, builds, records
# and prints the accuracy table; EVAL_ARGS are passed to eval/run.sh.
TRACE_RT := $(O)/kcc_trace_rt.o
$(TRACE_RT): tools/kcc-trace/kcc_trace_rt.c user/lib/ftrace_fmt.h \
		lbr/kcc_ppp.c lbr/kcc_ppp.h lbr/kcc_forest.h lbr/kcc_shim.h \
		selftests/lbrpmu/kcc_lbrpmu.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -g -O2 $(WARN) -fPIC $(CFLAGS) -c -o $@ $<

# The Valence runtime (tools/kcc-trace/kcc_valence_rt.c,
# Documentation/valence.rst).
VALENCE_RT := $(O)/kcc_valence_rt.o
$(VALENCE_RT): tools/kcc-trace/kcc_valence_rt.c user/lib/valence_area.h \
		include/uapi/linux/kcc.h
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $@")
	$(Q)$(CC) -std=gnu11 -g -O2 $(WARN) -fPIC -Iinclude/uapi -Iuser/lib \
		$(CFLAGS) -c -o $@ $<

.PHONY: trace-rt eval
trace-rt: $(TRACE_RT) $(VALENCE_RT)

eval: $(O)/kcc $(TRACE_RT)
	$(Q)KCC=$(abspath $(O)/kcc) KCC_TRACE_RT=$(abspath $(TRACE_RT)) \
		KCC_EVAL_OUT=$(abspath $(O)/eval) sh eval/run.sh $(EVAL_ARGS)

# ---- kernel module -------------------------------------------------------
# The -rt and -cloud header trees (scripts/kernels.sh) are flavours to
# test, not the default.
# make check boots every flavour of scripts/kernels.sh unless KDIR was
# given (on the command line or in the environment): then only that one.
KDIR_GIVEN := $(if $(filter command line environment,$(origin KDIR)),$(KDIR))
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		   $(lastword $(sort $(filter-out %-rt-amd64 %-cloud-amd64, \
		   $(wildcard /usr/src/linux-headers-*-amd64)))))

# kcc.ko is built in a copy of its sources under $(O)/module, so that
# builds with different O= never share objects.  Plain `make` builds it
# too when a kernel build tree exists.
KMOD_SRCS := Kbuild $(wildcard kmod/*.[ch] kmod/wrapper/*.h lbr/*.[ch]) \
	     include/uapi/linux/kcc.h

.PHONY: module
module: $(O)/module/kcc.ko

$(O)/module/kcc.ko: $(KMOD_SRCS)
	$(Q)test -n "$(KDIR)" || { echo "kcc: no kernel headers (set KDIR)" >&2; exit 1; }
	$(if $(Q),@echo "  KBUILD  $@")
	$(Q)rm -rf $(O)/module
	$(Q)sh selftests/guest/build_module.sh $(KDIR) $(O)/module

all: $(if $(wildcard $(KDIR)/Makefile),module)

# Guest suite figures: per-sample processing cost of kcc.ko under TCG.
# kcc against perf in one QEMU TCG boot (Documentation/benchmark.rst).
.PHONY: bench-guest
bench-guest: $(O)/static/kcc $(TRACE_RT)
	$(Q)KCC_STATIC=$(O)/static/kcc KCC_TRACE_RT=$(TRACE_RT) sh selftests/guest/bench.sh

# The bytes of both at about 10^4, 10^5 and 10^6 samples, one boot (30 to
# 60 minutes under TCG: not in CI; Documentation/benchmark.rst).
.PHONY: bench-guest-long
bench-guest-long: $(O)/static/kcc $(TRACE_RT)
	$(Q)KCC_STATIC=$(O)/static/kcc KCC_TRACE_RT=$(TRACE_RT) sh selftests/guest/bench.sh --long

# ---- reliability: kernel flavours, debug kernel, guest fuzzing, static --
# (Documentation/testing.rst)
FUZZ_SEED  ?= 1
FUZZ_ITER  ?= 5000
FUZZ_ITERS ?= $(FUZZ_ITER)
# The fuzzer runs twice, as root and then as uid 65534 (an unprivileged
# user) for half the iterations.  Guest time limit: on the debug kernel
# under TCG an iteration takes about 30 ms as root on a quiet machine;
# in a CI run beside two CPU loops (scripts/loaded.sh) 5000 took 956 s
# as root and 455 s as uid 65534, 1693 s with the boot and the checks.
FUZZ_GUEST_TIMEOUT ?= $(shell echo $$(( 1500 + $(FUZZ_ITERS) * 60 / 1000 )))
KERNELS	  ?= 6.1 6.12 6.12-rt debug debug-6.12

.PHONY: kernels
kernels:
	$(Q)sh scripts/kernels.sh provide $(KERNELS)

# The guest suite on every flavour (make check boots 6.1 and 6.12 only).
.PHONY: guest-kernels
guest-kernels:
	$(Q)KCC_GUEST_KERNELS="$(KERNELS)" sh selftests/kcc/guest.sh

# The guest suite on the 6.12 debug kernel (nightly, not in .ci/run:
# Documentation/testing.rst).
.PHONY: check-debug-6.12
check-debug-6.12:
	$(Q)sh scripts/kernels.sh provide debug-6.12 >/dev/null && \
		KCC_GUEST_KERNELS=debug-6.12 sh selftests/kcc/guest.sh

# kcc.ko under KCSAN (nightly, not in .ci/run: Documentation/testing.rst).
.PHONY: check-kcsan
check-kcsan:
	$(Q)sh scripts/check-kcsan.sh

.PHONY: fuzz-guest
fuzz-guest:
	$(Q)sh scripts/guest-progs.sh -f debug -t $(FUZZ_GUEST_TIMEOUT) \
		kcc_fuzz:-s,$(FUZZ_SEED),-n,$(FUZZ_ITERS) \
		kcc_fuzz:-u,65534,-s,$(FUZZ_SEED),-n,$(shell echo $$(( ($(FUZZ_ITERS) + 1) / 2 )))

.PHONY: adv-guest
adv-guest:
	$(Q)sh scripts/guest-progs.sh -f debug -t 1500 adv_recursion \
		adv_threads adv_fork adv_exec adv_exit

.PHONY: static
static:
	$(Q)sh scripts/static-checks.sh $(if $(KDIR),-K $(KDIR))

# make install: the tools and every man page (the hand-written ones of
# Documentation/man and those scripts/man.sh makes from --help with
# help2man); make install-dkms: kcc.ko's sources and dkms.conf under
# /usr/src/kcc-VERSION, for 'dkms build kcc/VERSION'.
mandir	?= $(prefix)/share/man
man1dir	?= $(mandir)/man1
srcdir_dkms ?= /usr/src
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: man
man: $(O)/man/.stamp

$(O)/man/.stamp: $(O)/kcc scripts/man.sh
	$(if $(Q),@echo "  MAN     $(O)/man")
	$(Q)rm -rf $(O)/man
	$(Q)sh scripts/man.sh $(O)/kcc $(O)/man
	$(Q)touch $@

.PHONY: install install-dkms
install: $(O)/kcc $(O)/kccread $(O)/man/.stamp
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(man1dir)
	install -m 0755 $(O)/kcc $(O)/kccread $(DESTDIR)$(bindir)/
	install -m 0644 Documentation/man/*.1 $(O)/man/*.1 $(DESTDIR)$(man1dir)/

install-dkms:
	install -d $(DESTDIR)$(srcdir_dkms)/kcc-$(DKMS_VERSION)
	cp -R Kbuild dkms.conf kmod lbr include \
		$(DESTDIR)$(srcdir_dkms)/kcc-$(DKMS_VERSION)/

# Debian packages (debian/, Documentation/packaging.rst), built with
# dpkg-buildpackage from a copy of the sources into $(O)/deb; check-deb
# installs them on a clean Debian 12 root (debootstrap, cached under
# /var/cache/kcc) and builds kcc.ko there with dkms.
.PHONY: deb check-deb
deb:
	$(Q)sh scripts/deb.sh $(O)/deb

check-deb: deb
	$(Q)sh selftests/deb/clean_root.sh $(O)/deb

# make demo as a new user runs it: on a fresh Debian 12 root
# (debootstrap, cached as check-deb's), timed, every package it installs
# checked for use.
.PHONY: check-demo
check-demo:
	$(Q)sh selftests/demo/fresh_root.sh

.PHONY: clean
clean:
	$(Q)rm -rf $(O)
	$(Q)if [ -n "$(KDIR)" ] && [ -d "$(KDIR)" ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1; fi; true
