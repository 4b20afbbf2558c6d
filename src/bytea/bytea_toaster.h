/*-------------------------------------------------------------------------
 *
 * bytea_toaster.h
 *	  The appendable bytea toaster (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_BYTEA_TOASTER_H
#define JSONB_TOASTER_BYTEA_TOASTER_H

extern void jt_bytea_toaster_init(void);

#endif							/* JSONB_TOASTER_BYTEA_TOASTER_H */
