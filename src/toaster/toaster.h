/*-------------------------------------------------------------------------
 *
 * toaster.h
 *	  The jsonb toaster (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/toaster.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_TOASTER_H
#define JSONB_TOASTER_TOASTER_H

extern void jt_toaster_init(void);

#endif							/* JSONB_TOASTER_TOASTER_H */
