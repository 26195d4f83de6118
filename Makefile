# swgpu - exact Smith-Waterman on CPUs and NVIDIA GPUs.
#
#   make            library (static + shared) and the swgpu tool
#   make check      build and run every test (GPU tests skip without a device)
#   make check-sanitize   the same, CPU build, under ASan (with leaks) + UBSan
#   make python     the Python package (python/) built in place in build/python
#   make check-python     its tests (pytest), against the swgpu tool's outputs
#   make check-tsan the multithreaded tests, CPU build, under ThreadSanitizer
#   make fuzz / fuzz-run   libFuzzer harnesses (tests/fuzz), a short run of each
#   make demo       search the bundled example data
#   make install PREFIX=/usr/local
#
# CUDA sources (src/*/*.cu) are built with CUDA=1, or, when CUDA is not
# given, if a GPU is present (nvidia-smi -L lists one, or /dev/nvidia0
# exists) and nvcc is found.  CUDA=0 (or NVCC=) builds for the CPU only.
# NVCC=/path/to/nvcc picks the compiler, CUDA_ARCH the GPU targets.

PREFIX    ?= /usr/local
CC        ?= cc
CFLAGS    ?= -O2 -g
WARN      := -Wall -Wextra
STD       := -std=c11 -D_GNU_SOURCE
CPPFLAGS  += -Iinclude -Isrc
LDLIBS    := -lz -lpthread -lm
NVCC      ?= $(shell command -v nvcc 2>/dev/null)
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=sm_80 \
             -gencode arch=compute_80,code=compute_80
NVCCFLAGS ?= -O3 -lineinfo
B         := build
# the shared library's version: libswgpu.so.$(SO_VERSION), SONAME libswgpu.so.$(SO_MAJOR)
SO_MAJOR  := 0
SO_VERSION := $(SO_MAJOR).1.0

# CUDA: 1 or 0 as given; else 1 when a GPU and nvcc are both found (NVCC=,
# empty, is 0; a CUDA in the environment other than 0 or 1 is not ours).
# The choice is printed once, by the top-level make.
ifeq ($(origin CUDA),environment)
  ifeq ($(filter 0 1,$(CUDA)),)
    CUDA :=
  endif
endif
ifeq ($(CUDA),)
  ifeq ($(NVCC),)
    CUDA := 0
    CUDA_WHY := NVCC is empty
  else ifneq ($(shell nvidia-smi -L 2>/dev/null | grep -c '^GPU'),0)
    CUDA := 1
    CUDA_WHY := a GPU was found; make CUDA=0 to build without it
  else ifneq ($(wildcard /dev/nvidia0),)
    CUDA := 1
    CUDA_WHY := a GPU was found; make CUDA=0 to build without it
  else
    CUDA := 0
    CUDA_WHY := no GPU found; make CUDA=1 to build it
  endif
else ifeq ($(CUDA),1)
  CUDA_WHY := CUDA=1
else ifeq ($(CUDA),0)
  CUDA_WHY := CUDA=0
else
  $(error CUDA=$(CUDA): give CUDA=1 (build the CUDA backend) or CUDA=0 (CPU only))
endif
ifeq ($(CUDA),1)
  ifeq ($(NVCC),)
    $(error CUDA=1 but no nvcc found: put it on PATH or give NVCC=/path/to/nvcc)
  endif
endif
ifeq ($(MAKELEVEL),0)
  ifneq ($(filter-out clean,$(or $(MAKECMDGOALS),all)),)
    $(info swgpu: building $(if $(filter 1,$(CUDA)),with CUDA ($(NVCC)),without CUDA) ($(CUDA_WHY)))
  endif
endif

LIB_C     := $(wildcard src/*/*.c)
CUDA_CU   := $(if $(filter 1,$(CUDA)),$(wildcard src/*/*.cu))

# per-file instruction-set flags, chosen by file-name suffix
simd_flags = $(if $(findstring _avx512,$1),-mavx512f -mavx512bw -mavx512vl -mavx2 -mbmi2,$(if $(findstring _avx2,$1),-mavx2 -mbmi2,$(if $(findstring _sse41,$1),-msse4.1,)))

LIB_OBJ   := $(LIB_C:%.c=$(B)/%.o) $(CUDA_CU:%.cu=$(B)/%.cu.o)

ifneq ($(CUDA_CU),)
  CUDA_HOME   ?= $(patsubst %/bin/nvcc,%,$(realpath $(NVCC)))
  CUDA_CPPFLAGS := -DSWGPU_HAVE_CUDA=1 -I$(CUDA_HOME)/include
  CPPFLAGS    += $(CUDA_CPPFLAGS)
  CUDA_LIBS   := -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
endif

TOOL      := $(B)/swgpu
TOOL_C    := $(wildcard tools/*.c)
# swgpu-mpi: the tool with its search and long alignment split across MPI
# ranks, built when mpicc is found (MPICC= skips it)
MPICC     ?= $(shell command -v mpicc 2>/dev/null)
MPI_C     := $(wildcard tools/mpi/*.c)
MPI_TOOL  := $(if $(MPICC),$(B)/swgpu-mpi)
TESTS_C   := $(wildcard tests/test_*.c)
TESTS     := $(TESTS_C:tests/%.c=$(B)/tests/%)
BENCH_C   := $(wildcard bench/*.c)
FUZZ_C    := $(wildcard tests/fuzz/fuzz_*.c)
REPLAYS   := $(FUZZ_C:tests/fuzz/%.c=$(B)/fuzz/replay_%)
BENCHES   := $(BENCH_C:bench/%.c=$(B)/bench/%)

.PHONY: all check check-structure check-sanitize check-tsan fuzz fuzz-run demo install clean bench FORCE \
        python py-ext check-python
all: $(B)/libswgpu.a $(B)/libswgpu.so $(B)/libswgpu.so.$(SO_MAJOR) $(TOOL) $(MPI_TOOL) $(B)/swgpu.pc

# what the objects were compiled with: a build directory switched between
# CUDA and CPU-only (or other flags) recompiles instead of mixing the two
$(B)/config: FORCE
	@mkdir -p $(B)
	@printf '%s\n' 'CC=$(CC)' 'CFLAGS=$(CFLAGS)' 'CPPFLAGS=$(CPPFLAGS)' 'CUDA=$(CUDA)' \
	  $(if $(CUDA_CU),'NVCC=$(NVCC)' 'NVCCFLAGS=$(NVCCFLAGS)' 'CUDA_ARCH=$(CUDA_ARCH)') > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(B)/%.o: %.c $(wildcard include/*.h include/swgpu/*.h src/*/*.h) $(B)/config
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -fPIC $(call simd_flags,$<) -c $< -o $@

$(B)/%.cu.o: %.cu $(wildcard include/*.h include/swgpu/*.h src/*/*.h src/*/*.cuh) $(B)/config
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(CUDA_ARCH) -Iinclude -Isrc -Xcompiler -fPIC,-Wall -c $< -o $@

$(B)/libswgpu.a: $(LIB_OBJ)
	rm -f $@ && ar rcs $@ $(filter %.o,$^)

# the shared library, and its links libswgpu.so.$(SO_MAJOR) (the SONAME,
# what programs load) and libswgpu.so (what -lswgpu finds)
$(B)/libswgpu.so.$(SO_VERSION): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libswgpu.so.$(SO_MAJOR) -o $@ $(filter %.o,$^) $(CUDA_LIBS) $(LDLIBS)

$(B)/libswgpu.so.$(SO_MAJOR): $(B)/libswgpu.so.$(SO_VERSION)
	ln -sfn libswgpu.so.$(SO_VERSION) $@

$(B)/libswgpu.so: $(B)/libswgpu.so.$(SO_MAJOR)
	ln -sfn libswgpu.so.$(SO_MAJOR) $@

$(TOOL): $(TOOL_C) tools/cli.h $(B)/libswgpu.a
	$(CC) $(STD) $(CPPFLAGS) -Itools $(CFLAGS) $(WARN) -o $@ $(TOOL_C) $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

$(B)/swgpu-mpi: $(TOOL_C) $(MPI_C) tools/cli.h tools/mpi/mpi_cli.h $(B)/libswgpu.a
	$(MPICC) $(STD) $(CPPFLAGS) -Itools -DSWGPU_MPI $(CFLAGS) $(WARN) -o $@ $(TOOL_C) $(MPI_C) $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

$(B)/tests/%: tests/%.c tests/tap.h tests/testlib.h tests/inproc_comm.h $(B)/libswgpu.a
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CPPFLAGS) -Itests $(CFLAGS) $(WARN) -o $@ $< $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

$(B)/bench/%: bench/%.c tests/inproc_comm.h tests/testlib.h $(B)/libswgpu.a
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $< $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

# the pkg-config file records PREFIX, so it is rebuilt whenever PREFIX changes
$(B)/swgpu.pc: FORCE
	@mkdir -p $(B)
	@printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: swgpu\nDescription: exact Smith-Waterman alignment on CPUs and GPUs\nVersion: 0.1.0\nLibs: -L$${libdir} -Wl,-rpath,$${libdir} -lswgpu\nLibs.private: %s -lz -lpthread -lm\nCflags: -I$${includedir}\n' \
	  '$(PREFIX)' '$(CUDA_LIBS)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

FORCE:

bench: $(BENCHES)

# the chromosome-pair and synthetic-database generators are checked with the
# bench scripts that use them; gen_synth also feeds the streamed search test
# (stream.sh)
check: $(TOOL) $(MPI_TOOL) $(TESTS) $(REPLAYS) $(B)/bench/gen_chrom $(B)/bench/gen_synth
	@sh tests/run.sh $(B)

# the layering and size rules (docs/architecture.md): no include or call
# loop between files or folders, files <= 1,000 lines, functions <= 150
check-structure: $(B)/libswgpu.a $(TOOL) $(MPI_TOOL)
	python3 scripts/check-structure $(B)

# fuzz_cli links the tool's option parsing: every tools/*.c but main's
CLI_C     := $(filter-out tools/swgpu.c,$(TOOL_C))
fuzz_src   = $< $(if $(findstring fuzz_cli,$<),-Itools $(CLI_C))

# the fuzz harnesses without libFuzzer: make check replays the saved corpus
$(B)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(CLI_C) tools/cli.h $(B)/libswgpu.a
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CPPFLAGS) -Itests/fuzz $(CFLAGS) $(WARN) -o $@ $(fuzz_src) tests/fuzz/replay.c $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

# libFuzzer harnesses (Debian's clang): the CPU library built with clang under
# ASan + UBSan in build-fuzz/, one fuzzer per tests/fuzz/fuzz_*.c
FUZZ_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZERS   := $(FUZZ_C:tests/fuzz/%.c=build-fuzz/fuzz/%)
fuzz:
	$(MAKE) B=build-fuzz CUDA=0 CC=clang CFLAGS="$(FUZZ_FLAGS) -fsanitize=fuzzer-no-link" build-fuzz/libswgpu.a
	$(MAKE) CUDA=0 $(FUZZERS)
build-fuzz/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(CLI_C) tools/cli.h build-fuzz/libswgpu.a
	@mkdir -p $(dir $@)
	clang $(STD) $(CPPFLAGS) -Itests/fuzz $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $(fuzz_src) build-fuzz/libswgpu.a $(LDLIBS)
# a short run of every fuzzer from its saved corpus (FUZZ_SECONDS each; make
# -j2 fuzz-run runs two at a time); new inputs go to build-fuzz/corpus, crashes
# to build-fuzz/ (copy them into tests/fuzz/corpus/ so that make check replays
# them from then on)
FUZZ_SECONDS ?= 20
FUZZ_RUNS := $(FUZZ_C:tests/fuzz/fuzz_%.c=fuzz-run-%)
.PHONY: $(FUZZ_RUNS)
fuzz-run: $(FUZZ_RUNS)
$(FUZZ_RUNS): fuzz-run-%: fuzz
	@mkdir -p build-fuzz/corpus/$*
	@echo "fuzz $*: $(FUZZ_SECONDS) s"
	@build-fuzz/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/ build-fuzz/corpus/$* tests/fuzz/corpus/$* 2>build-fuzz/$*.log || \
	    { tail -40 build-fuzz/$*.log; exit 1; }
	@echo "fuzz $*: $$(grep -E '^Done [0-9]+ runs' build-fuzz/$*.log), no crash"

# every test of the CPU build under AddressSanitizer (leaks included) and
# UndefinedBehaviorSanitizer, in its own build directory; SWGPU_TEST_QUICK=1
# trims the random cases (the plain check runs them all)
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
check-sanitize:
	SWGPU_TEST_QUICK=1 ASAN_OPTIONS=detect_leaks=1 SWGPU_TEST_CFLAGS="$(SAN_FLAGS)" \
	    $(MAKE) B=build-san CUDA=0 CFLAGS="$(SAN_FLAGS)" check

# the multithreaded paths under ThreadSanitizer (CPU build, build-tsan/): the
# tests of the search threads, the SIMD engine's scan threads, the long
# alignment's bands and traceback pieces, the library used from several
# threads at once, the iterated search's PSSM builds running beside its
# search (test_pssm), tabular output formatted on several threads
# (test_format), a batch's fits on several threads (test_strands), and the tool's searches and alignments with -t 1, 2, 4;
# SWGPU_TEST_QUICK=1 trims their random cases (TSan slows the code ~20x)
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS := test_search test_scan_many test_simd test_simd_pair test_long test_concurrent test_pssm test_format \
              test_stream test_strands
check-tsan:
	$(MAKE) B=build-tsan CUDA=0 CFLAGS="$(TSAN_FLAGS)" build-tsan/swgpu $(TSAN_TESTS:%=build-tsan/tests/%)
	SWGPU_TEST_QUICK=1 TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	    sh tests/run.sh build-tsan $(TSAN_TESTS) threads.sh

# The Python package (python/swgpu): the extension module, linked with the
# static library (and CUDA's static runtime when the library has CUDA), next
# to the package's .py files in $(PY_B)/swgpu, importable with
# PYTHONPATH=$(PY_B).  PYTHON is the interpreter it is built for and tested
# with (default: python/find-python, /usr/bin/python3 when it has its headers
# and pytest).  `pip install .` builds the same through setup.py.
PYTHON    ?= $(eval PYTHON := $(shell sh python/find-python))$(PYTHON)
PY_B      ?= $(B)/python
PY_SRC    := $(wildcard python/swgpu/*.py)
PY_EXT_C  := $(wildcard python/swgpu/_swgpu*.c)
PY_CFLAGS := -fPIC -fvisibility=hidden -shared -Wl,--exclude-libs,ALL

python: $(B)/libswgpu.a
	@test -n "$(PYTHON)" || { echo "make python: no Python 3 with its C headers (apt-get install python3-dev)" >&2; exit 1; }
	@$(MAKE) --no-print-directory py-ext \
	    PY_EXT="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')" \
	    PY_INC="$$($(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"

py-ext: $(PY_B)/swgpu/_swgpu$(PY_EXT) $(PY_SRC:python/%=$(PY_B)/%)

$(PY_B)/swgpu/_swgpu$(PY_EXT): $(PY_EXT_C) python/swgpu/_swgpu.h include/swgpu.h $(wildcard include/swgpu/*.h) $(B)/libswgpu.a
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(CPPFLAGS) -I$(PY_INC) $(CFLAGS) $(WARN) $(PY_CFLAGS) -o $@ $(PY_EXT_C) \
	    $(B)/libswgpu.a $(CUDA_LIBS) $(LDLIBS)

$(PY_B)/swgpu/%.py: python/swgpu/%.py
	@mkdir -p $(dir $@)
	cp $< $@

# what setup.py compiles and links the extension with, beside libswgpu.a
$(B)/python-ext.flags: FORCE
	@mkdir -p $(B)
	@printf 'cflags: %s\nlibs: %s\n' '$(strip $(STD) $(CUDA_CPPFLAGS) $(WARN))' \
	  '$(strip $(CUDA_LIBS) $(LDLIBS))' > $@

# the package's tests; SWGPU_CLI is the tool they compare outputs with
check-python: python $(TOOL)
	SWGPU_CLI=$(abspath $(TOOL)) PYTHONPATH=$(abspath $(PY_B)) $(PYTHON) -m pytest -q python/tests

demo: $(TOOL)
	$(TOOL) search -q examples/queries.fasta -d examples/db.fasta -n 3 --outfmt 7
	$(TOOL) search -q examples/queries.fasta -d examples/db.fasta -n 1 --outfmt pair

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(TOOL) $(DESTDIR)$(PREFIX)/bin/swgpu
	$(if $(MPI_TOOL),install -m 755 $(MPI_TOOL) $(DESTDIR)$(PREFIX)/bin/swgpu-mpi)
	install -m 644 $(B)/libswgpu.a $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(B)/libswgpu.so.$(SO_VERSION) $(DESTDIR)$(PREFIX)/lib/
	ln -sfn libswgpu.so.$(SO_VERSION) $(DESTDIR)$(PREFIX)/lib/libswgpu.so.$(SO_MAJOR)
	ln -sfn libswgpu.so.$(SO_MAJOR) $(DESTDIR)$(PREFIX)/lib/libswgpu.so
	install -m 644 include/swgpu.h $(DESTDIR)$(PREFIX)/include/
	install -d $(DESTDIR)$(PREFIX)/include/swgpu
	install -m 644 include/swgpu/*.h $(DESTDIR)$(PREFIX)/include/swgpu/
	install -m 644 $(B)/swgpu.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/
	install -m 644 docs/swgpu.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -rf $(B)
