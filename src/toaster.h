/*-------------------------------------------------------------------------
 *
 * toaster.h
 *	  The jsonb toaster (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TOASTER_H
#define JSONB_TOASTER_TOASTER_H

/*
 * The toaster's id in every pointer it writes.  It must never change:
 * pg_upgrade copies heap files as they are.
 */
#define JSONB_TOASTER_ID			1
#define JSONB_TOASTER_NAME			"jsonb_toaster"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		16384

extern void jt_toaster_init(void);

#endif							/* JSONB_TOASTER_TOASTER_H */
