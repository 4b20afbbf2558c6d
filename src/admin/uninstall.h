/*-------------------------------------------------------------------------
 *
 * uninstall.h
 *	  Leaving the toaster: column conversion and the DROP EXTENSION guard.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/admin/uninstall.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_UNINSTALL_H
#define JSONB_TOASTER_UNINSTALL_H

#ifdef JT_CUSTOM_TOAST
extern void jt_uninstall_init(void);
#endif

#endif							/* JSONB_TOASTER_UNINSTALL_H */
