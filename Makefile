# Makefile for jsonb_toaster (PGXS)
#
#   make PG_CONFIG=/path/to/pg_config
#   make PG_CONFIG=/path/to/pg_config install
#   make PG_CONFIG=/path/to/pg_config installcheck   # against a running server
#
# tools/test.sh runs everything (server build, temporary instance, pg_regress
# and TAP) in one command.

# where this Makefile is (VPATH builds run it from elsewhere)
jt_srcdir := $(dir $(lastword $(MAKEFILE_LIST)))

MODULE_big = jsonb_toaster
OBJS = \
	src/accessors.o \
	src/datum_source.o \
	src/decode.o \
	src/decode_lz4.o \
	src/decode_pglz.o \
	src/delta.o \
	src/introspect.o \
	src/jsonb_toaster.o \
	src/jsonb_writer.o \
	src/navigator.o \
	src/overrides.o \
	src/part_cache.o \
	src/part_compress.o \
	src/part_fetch.o \
	src/partial_update.o \
	src/partial_update_funcs.o \
	src/partial_update_tree.o \
	src/skeleton.o \
	src/skeleton_build.o \
	src/sharing.o \
	src/skeleton_read.o \
	src/toast_iterator.o \
	src/toaster.o \
	src/uninstall.o \
	src/xact_reset.o

EXTENSION = jsonb_toaster
DATA = jsonb_toaster--0.1.sql
PGFILEDESC = "jsonb_toaster - TOAST that understands jsonb"

REGRESS = storage partial_access corruption lz4_corruption call_site_memory accessor_memory
REGRESS_OPTS = --inputdir=$(srcdir) --outputdir=$(CURDIR)
TAP_TESTS = 1

PG_CONFIG ?= pg_config

# The toaster needs the custom TOAST hooks of patches/postgresql-18: build
# its parts only against a server that has them.  On a stock server the
# extension still builds, with the partial-access features only.
include $(jt_srcdir)custom_toast.mk
ifeq ($(CUSTOM_TOAST),yes)
REGRESS += toaster sharing partial_update deltas update_random toaster_corruption rewrite column_privileges override_results convert_ownership
# Isolation specs (specs/, several sessions) run with the pg_regress files,
# not when REGRESS is emptied to run only the TAP tests, which start
# clusters of their own.
ifneq ($(strip $(REGRESS)),)
ISOLATION = convert_column_lock
endif
else
REGRESS += stock
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks header dependencies only on servers configured with
# --enable-depend: rebuild every object when one of our headers changes.
$(OBJS): $(wildcard $(jt_srcdir)src/*.h)
