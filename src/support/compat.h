/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Differences between the PostgreSQL major versions jsonb_toaster
 *	  supports (15 to 18), kept in one place.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * src/support/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_COMPAT_H
#define JSONB_TOASTER_COMPAT_H

#if PG_VERSION_NUM < 150000
#error "jsonb_toaster requires PostgreSQL 15 or later"
#endif

/* The varlena macros moved out of postgres.h in 16. */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

/* 18 spells "does not return" as a prefix specifier; 15-17 as an attribute. */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/*
 * The snapshot for reading TOAST: 18 returns one; 15-17 fill one in
 * caller-provided storage ("buf", not evaluated on 18).
 */
#if PG_VERSION_NUM >= 180000
#define jt_get_toast_snapshot(buf) get_toast_snapshot()
#else
#define jt_get_toast_snapshot(buf) (init_toast_snapshot(buf), (buf))
#endif

/* pg_noreturn appeared in 18; older servers spell it with an attribute */
#ifdef pg_noreturn
#define JT_NORETURN pg_noreturn
#else
#define JT_NORETURN __attribute__((noreturn))
#endif

#endif							/* JSONB_TOASTER_COMPAT_H */
