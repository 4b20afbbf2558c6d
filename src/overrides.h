/*-------------------------------------------------------------------------
 *
 * overrides.h
 *	  The extension's accessors in place of the builtin jsonb accessors.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/overrides.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_OVERRIDES_H
#define JSONB_TOASTER_OVERRIDES_H

extern void jt_overrides_init(void);

#endif							/* JSONB_TOASTER_OVERRIDES_H */
