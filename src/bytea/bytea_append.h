/*-------------------------------------------------------------------------
 *
 * bytea_append.h
 *	  bytea || bytea on a value of the appendable bytea toaster.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_append.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_BYTEA_APPEND_H
#define JSONB_TOASTER_BYTEA_APPEND_H

#include "fmgr.h"

extern Datum jt_bytea_cat(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_BYTEA_APPEND_H */
