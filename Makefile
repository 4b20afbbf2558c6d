# Makefile for jsonb_toaster (PGXS)
#
#   make PG_CONFIG=/path/to/pg_config
#   make PG_CONFIG=/path/to/pg_config install
#   make PG_CONFIG=/path/to/pg_config installcheck   # against a running server
#   make PG_CONFIG=/path/to/pg_config installcheck \
#        EXTRA_REGRESS_OPTS=--temp-instance=./tmp_check    # on a temporary one
#   make PG_CONFIG=/path/to/pg_config prove_installcheck  # the TAP tests
#
# installcheck installs the test helpers (test/modules/jsonb_toaster_test)
# into the server first, and runs the files that apply to it: on a server
# with the custom TOAST hooks, the toaster's too, which need the library
# preloaded (a temporary instance takes test/preload.conf).
#
# tools/test.sh runs everything (server build, temporary instance, pg_regress
# and TAP) in one command.

# where this Makefile is (VPATH builds run it from elsewhere)
jt_srcdir := $(dir $(lastword $(MAKEFILE_LIST)))

MODULE_big = jsonb_toaster

# The folders of src/, from the bottom up: each uses only those above it in
# this list (docs/development.md has the map).
OBJS = \
	src/support/xact_reset.o \
	src/support/crc32c.o \
	src/jsonb/jsonb_writer.o \
	src/jsonb/navigator.o \
	src/decode/decode.o \
	src/decode/decode_lz4.o \
	src/decode/decode_pglz.o \
	src/format/part.o \
	src/format/delta.o \
	src/format/skeleton.o \
	src/format/skeleton_build.o \
	src/format/tree_edits.o \
	src/format/flatten.o \
	src/toast/part_fetch.o \
	src/toast/toast_iterator.o \
	src/read/accessors.o \
	src/read/datum_source.o \
	src/read/skeleton_read.o \
	src/admin/introspect.o \
	src/admin/bytea_storage.o \
	src/admin/column_label.o \
	src/admin/uninstall.o \
	src/jsonb_toaster.o

EXTENSION = jsonb_toaster
DATA = jsonb_toaster--0.3.sql jsonb_toaster--0.2.sql jsonb_toaster--0.1.sql \
	jsonb_toaster--0.1--0.2.sql jsonb_toaster--0.2--0.3.sql
PGFILEDESC = "jsonb_toaster - TOAST that understands jsonb"

REGRESS = storage partial_access corruption lz4_corruption call_site_memory accessor_memory extension_versions
REGRESS_OPTS = --inputdir=$(srcdir) --outputdir=$(CURDIR) \
	--temp-config=$(jt_srcdir)test/preload.conf
ISOLATION_OPTS = --temp-config=$(jt_srcdir)test/preload.conf
# TAP_TESTS= (make or the environment) leaves the TAP tests out
TAP_TESTS ?= 1

PG_CONFIG ?= pg_config

# the sources include their headers by folder: "format/skeleton.h"
PG_CPPFLAGS += -I$(jt_srcdir)src

# Whole lz4 parts are decoded by liblz4, as core decodes TOAST values, when
# the server was built with lz4 and liblz4's header is here to build
# against; else by the project's decoder alone.
jt_hash := \#
jt_server_lz4 := $(shell grep -s '^$(jt_hash)define USE_LZ4 1' \
	$(shell $(PG_CONFIG) --includedir-server)/pg_config.h)
jt_lz4_header := $(shell echo '$(jt_hash)include <lz4.h>' | \
	$(shell $(PG_CONFIG) --cc) $(shell $(PG_CONFIG) --cppflags) -E -x c - \
	>/dev/null 2>&1 && echo yes)
ifneq (,$(and $(jt_server_lz4),$(jt_lz4_header)))
PG_CPPFLAGS += -DJT_HAVE_LIBLZ4
SHLIB_LINK += -llz4
endif

# The toaster needs the custom TOAST hooks of patches/postgresql-18: build
# its parts only against a server that has them.  On a stock server the
# extension still builds, with the partial-access features only.
include $(jt_srcdir)custom_toast.mk
ifeq ($(CUSTOM_TOAST),yes)
OBJS += \
	src/format/pointer.o \
	src/toast/pointer_open.o \
	src/toast/value_delete.o \
	src/read/narrow.o \
	src/read/jsonpath_funcs.o \
	src/read/containment.o \
	src/read/record_funcs.o \
	src/read/root_funcs.o \
	src/support/writing_statement.o \
	src/toaster/part_cache.o \
	src/toaster/adopt.o \
	src/toaster/logical_log.o \
	src/toaster/part_write.o \
	src/toaster/patch_pointer.o \
	src/toaster/settings.o \
	src/toaster/shared_stream.o \
	src/toaster/sharing.o \
	src/toaster/toaster.o \
	src/toaster/tree_outside.o \
	src/update/document_size.o \
	src/update/key_funcs.o \
	src/update/part_change.o \
	src/update/path_funcs.o \
	src/update/stored_value.o \
	src/update/tree_change.o \
	src/bytea/bytea_pointer.o \
	src/bytea/bytea_chunks.o \
	src/bytea/bytea_toaster.o \
	src/bytea/bytea_append.o \
	src/subscripting.o \
	src/overrides.o
REGRESS += toaster sharing packing units tree_outside large_documents nested_documents folded partial_update deltas update_random syntaxes_random toaster_corruption rewrite column_privileges override_results convert_ownership column_options column_label bytea_toaster executor_paths
# Isolation specs (specs/, several sessions) run with the pg_regress files,
# not when REGRESS is emptied to run only the TAP tests, which start
# clusters of their own.
ifneq ($(strip $(REGRESS)),)
ISOLATION = convert_column_lock bytea_append_concurrency held_documents
endif
else
REGRESS += stock
endif

# an out-of-tree (VPATH) build makes the object folders it needs
ifdef VPATH
$(shell mkdir -p $(sort $(dir $(OBJS))))
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The regression files use test helpers, built here (out of tree as the
# extension is) and installed beside it before they run.
jt_test_module := $(abspath $(jt_srcdir)test/modules/jsonb_toaster_test)
.PHONY: install-test-module
install-test-module:
	@mkdir -p test_module
	$(MAKE) -C test_module -f $(jt_test_module)/Makefile \
		VPATH=$(jt_test_module) PG_CONFIG=$(PG_CONFIG) all install
installcheck: install-test-module

# The distribution archive for PGXN: the committed tree at HEAD, less what
# .gitattributes leaves out, as jsonb_toaster-<META.json's version>.zip.
jt_version = $(shell sed -n 's/^   "version": "\(.*\)",$$/\1/p' $(jt_srcdir)META.json)
.PHONY: dist
dist:
	git -C $(abspath $(jt_srcdir)) archive --format zip \
		--prefix=jsonb_toaster-$(jt_version)/ \
		-o $(CURDIR)/jsonb_toaster-$(jt_version).zip HEAD

# PGXS tracks header dependencies only on servers configured with
# --enable-depend: rebuild every object when one of our headers changes.
$(OBJS): $(wildcard $(jt_srcdir)src/*.h $(jt_srcdir)src/*/*.h)
