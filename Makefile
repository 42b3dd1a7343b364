# flameagent: one non-recursive Makefile; everything lands under build/.
.DELETE_ON_ERROR:
.SUFFIXES:

CFLAGS ?= -O2 -g
CC ?= cc
WERROR ?= 1

ifeq ($(origin JAVA_HOME),undefined)
JAVA_HOME := $(shell j=$$(command -v javac) && dirname "$$(dirname "$$(readlink -f "$$j")")")
endif
JVMTI_H := $(JAVA_HOME)/include/jvmti.h
# make demo / make test work on a fresh machine: install the JDK and packages first when missing
ifneq ($(filter demo test,$(MAKECMDGOALS)),)
ifeq ($(wildcard $(JVMTI_H)),)
$(info $(shell scripts/install-deps.sh >&2))
JAVA_HOME := $(shell j=$$(command -v javac) && dirname "$$(dirname "$$(readlink -f "$$j")")")
JVMTI_H := $(JAVA_HOME)/include/jvmti.h
endif
endif
NEEDS_JDK := $(filter-out clean help,$(or $(MAKECMDGOALS),all))
ifneq ($(NEEDS_JDK),)
ifeq ($(wildcard $(JVMTI_H)),)
$(error jvmti.h not found (JAVA_HOME='$(JAVA_HOME)'): install a JDK, e.g. 'apt-get install openjdk-17-jdk-headless', or set JAVA_HOME to one)
endif
endif
JAVAC := $(JAVA_HOME)/bin/javac

REQ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -fno-omit-frame-pointer -fPIC -fvisibility=hidden -pthread \
	-Iinclude -Iagent -Ilauncher -Ibuild/gen -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -MMD -MP
ifeq ($(WERROR),1)
REQ_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
REQ_CFLAGS += -fsanitize=$(SANITIZE)
SAN_LDFLAGS := -fsanitize=$(SANITIZE)
endif
# Signal-path objects: keep GCC from turning loops into memcpy/memset calls.
SIG_CFLAGS := -fno-tree-loop-distribute-patterns
LIBS := -lz -ldl -lpthread -lm -lrt

ifeq ($(V),1)
Q :=
else
Q := @
endif

SIG_SRCS := agent/sampler.c agent/stackwalk.c agent/calltrace.c agent/hotspot.c agent/perf_ring.c
AGENT_SRCS := $(wildcard agent/*.c)
# Files that call into the JVM or its engines; everything else in agent/ is pure C that unit
# tests and flameconv link too.
AGENT_JVM_SRCS := $(filter $(addprefix agent/,agent.c profiler.c vm.c vmstructs.c threads.c sampler.c \
	engine_%.c),$(AGENT_SRCS))
AGENT_PURE_SRCS := $(filter-out $(AGENT_JVM_SRCS),$(AGENT_SRCS))
RES_FILES := $(sort $(wildcard agent/res/*))

obj = $(patsubst %.c,build/obj/%.o,$(1))
AGENT_OBJS := $(call obj,$(AGENT_SRCS)) build/obj/gen/res.o
PURE_OBJS := $(call obj,$(AGENT_PURE_SRCS)) build/obj/gen/res.o

LIB := build/lib/libflameagent.so
FLAMEATTACH_SRCS := $(wildcard launcher/flameattach.c launcher/attach.c launcher/proc.c)
FLAMECONV_SRCS := $(wildcard launcher/flameconv.c launcher/read_*.c)
BINS := $(if $(wildcard launcher/flameattach.c),build/bin/flameattach) \
	$(if $(wildcard launcher/flameconv.c),build/bin/flameconv)
# JNI / native helper libraries for test apps: test/native/X.c -> build/test/native/libX.so
NATIVE_TEST_LIBS := $(patsubst test/native/%.c,build/test/native/lib%.so,$(wildcard test/native/*.c))
# libjniburn.so stripped, burn_loop hidden, symbols in a separate debug file with a compressed .symtab
STRIPPED_TEST_LIB := build/test/native/libjniburn_stripped.so
NATIVE_TEST_LIBS += $(STRIPPED_TEST_LIB)
UNIT_TESTS := $(patsubst test/unit/%.c,build/test/%,$(wildcard test/unit/test_*.c))
JAVA_APPS := $(wildcard java-test-apps/*.java)
JAVA_STAMP := build/java/.stamp

.PHONY: all test check check-static bench demo install clean unit integration java
all: $(LIB) $(BINS) $(JAVA_STAMP) $(NATIVE_TEST_LIBS)

build/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) $(REQ_CFLAGS) $(if $(filter $<,$(SIG_SRCS)),$(SIG_CFLAGS)) $(EXTRA_CFLAGS) -c -o $@ $<

build/gen/embed: scripts/embed.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -O1 -o $@ $<

build/gen/res.c: build/gen/embed $(RES_FILES) Makefile
	@$(if $(Q),echo "  EMBED   $(RES_FILES)")
	$(Q)build/gen/embed $(RES_FILES) > $@

build/obj/gen/res.o: build/gen/res.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $(REQ_CFLAGS) -Iagent -c -o $@ $<

# res.c must exist before anything that includes res.h is compiled
$(call obj,$(AGENT_SRCS) $(FLAMECONV_SRCS)): | build/gen/res.c

$(LIB): $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared $(SAN_LDFLAGS) -Wl,--no-undefined -Wl,-z,defs -o $@ $^ $(LIBS)

build/bin/flameattach: $(call obj,$(FLAMEATTACH_SRCS))
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN_LDFLAGS) -o $@ $^ $(LIBS)

build/bin/flameconv: $(call obj,$(FLAMECONV_SRCS)) $(PURE_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(SAN_LDFLAGS) -o $@ $^ $(LIBS)

build/test/%: build/obj/test/unit/%.o $(PURE_OBJS) $(call obj,$(wildcard launcher/read_*.c launcher/attach.c launcher/proc.c))
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SAN_LDFLAGS) -o $@ $^ $(LIBS)

build/test/native/lib%.so: test/native/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -O1 -g -fPIC -shared -fno-omit-frame-pointer -isystem $(JAVA_HOME)/include \
		-isystem $(JAVA_HOME)/include/linux -o $@ $<

build/test/tools/%: test/tools/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -O1 -g -Wall -o $@ $< -lz -ldl

# GDB's layout: the library stripped of every symbol but .dynsym, its debug file (DWARF and .symtab, both
# zlib-compressed) in .debug/ beside it, found through .gnu_debuglink (name + CRC32)
$(STRIPPED_TEST_LIB): test/native/jniburn.c build/test/tools/elfcompress
	@mkdir -p $(dir $@).debug
	@$(if $(Q),echo "  CC      $< (stripped, .debug/$(notdir $@).debug)")
	$(Q)$(CC) -O1 -g -fPIC -shared -fno-omit-frame-pointer -DJNIBURN_HIDDEN -isystem $(JAVA_HOME)/include \
		-isystem $(JAVA_HOME)/include/linux -o $@.full $<
	$(Q)objcopy --only-keep-debug --compress-debug-sections=zlib $@.full $(dir $@).debug/$(notdir $@).debug
	$(Q)build/test/tools/elfcompress $(dir $@).debug/$(notdir $@).debug .symtab .strtab
	$(Q)strip --strip-all -o $@.stripped $@.full
	$(Q)objcopy --add-gnu-debuglink=$(dir $@).debug/$(notdir $@).debug $@.stripped $@
	$(Q)rm -f $@.full $@.stripped

$(JAVA_STAMP): $(JAVA_APPS)
	@mkdir -p build/java
	@$(if $(Q),echo "  JAVAC   java-test-apps")
	$(Q)$(JAVAC) --release 17 -g -d build/java $(JAVA_APPS)
	@touch $@

java: $(JAVA_STAMP)

# cstack=dwarf: the table lookup runs in the signal handler; the JNI test library once more without
# frame pointers (t_dwarf.sh); the unwinder's unit test walks its own functions built without them
SIG_SRCS += agent/dwarf_table.c
all: build/test/native/libjniburn_nofp.so
build/test/native/libjniburn_nofp.so: test/native/jniburn.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (no frame pointers)")
	$(Q)$(CC) -O2 -g -fPIC -shared -fomit-frame-pointer -fno-inline -fasynchronous-unwind-tables \
		-isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -o $@ $<
build/obj/test/unit/test_dwarf.o: EXTRA_CFLAGS := -fomit-frame-pointer -O2

unit: $(UNIT_TESTS)
	@scripts/run-unit-tests.sh $(UNIT_TESTS)

integration: all
	@JAVA_HOME=$(JAVA_HOME) test/integration/run.sh

# make test: unit + integration, ending with the line "N passed, N failed"
test: deps all $(UNIT_TESTS)
	@JAVA_HOME=$(JAVA_HOME) scripts/run-tests.sh $(UNIT_TESTS)

# make check: build, signal-safety and export checks, then the tests
check: check-static
	@$(MAKE) --no-print-directory test

check-static: all
	@scripts/check-signal-safety.sh $(call obj,$(SIG_SRCS))
	@scripts/check-exports.sh $(LIB)


bench: all
	@JAVA_HOME=$(JAVA_HOME) scripts/bench.sh

demo: deps all
	@JAVA_HOME=$(JAVA_HOME) scripts/demo.sh

PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libflameagent.so
	$(if $(wildcard build/bin/flameattach),install -m 755 build/bin/flameattach $(DESTDIR)$(PREFIX)/bin/flameattach)
	$(if $(wildcard build/bin/flameattach),ln -sf flameattach $(DESTDIR)$(PREFIX)/bin/asprof)
	$(if $(wildcard build/bin/flameconv),install -m 755 build/bin/flameconv $(DESTDIR)$(PREFIX)/bin/flameconv)
	$(if $(wildcard scripts/profiler.sh),install -m 755 scripts/profiler.sh $(DESTDIR)$(PREFIX)/profiler.sh)

clean:
	rm -rf build

-include $(shell find build/obj -name '*.d' 2>/dev/null)

.PHONY: deps
deps:
	@scripts/install-deps.sh

# make stress: the sampler for 5 minutes under deoptimisation, class unloading and GC pressure (issue 8)
.PHONY: stress
stress: all
	@s=$${STRESS_SECONDS:-300}; JAVA_HOME=$(JAVA_HOME) STRESS_SECONDS=$$s TEST_TIMEOUT=$$((2 * s + 600)) \
		TESTS=t_stress.sh test/integration/run.sh
