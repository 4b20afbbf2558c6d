/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Differences between the PostgreSQL major versions jsonb_toaster
 *	  supports (15 to 18), kept in one place.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 * Portions Copyright (c) 1996-2025, PostgreSQL Global Development Group
 *
 * src/compat.h
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

#endif							/* JSONB_TOASTER_COMPAT_H */
