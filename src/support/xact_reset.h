/*-------------------------------------------------------------------------
 *
 * xact_reset.h
 *	  State kept from one call to the next until the transaction ends.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/xact_reset.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_XACT_RESET_H
#define JSONB_TOASTER_XACT_RESET_H

typedef void (*JtResetFunction) (void);

extern void jt_reset_at_xact_end(JtResetFunction reset);

#endif							/* JSONB_TOASTER_XACT_RESET_H */
