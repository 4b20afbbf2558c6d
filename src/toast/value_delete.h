/*-------------------------------------------------------------------------
 *
 * value_delete.h
 *	  Deleting a TOAST value while reading one part of it (patched servers
 *	  only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/value_delete.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_VALUE_DELETE_H
#define JSONB_TOASTER_VALUE_DELETE_H

#include "format/format.h"

extern struct varlena *jt_delete_value_reading(Oid toastrelid,
											   const JtPartEntry *range,
											   bool is_speculative);

#endif							/* JSONB_TOASTER_VALUE_DELETE_H */
