/*-------------------------------------------------------------------------
 *
 * partial_update.h
 *	  jsonb_set(), #-, - and || on a stored document, run on the one part
 *	  they change (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/partial_update.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PARTIAL_UPDATE_H
#define JSONB_TOASTER_PARTIAL_UPDATE_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins of the same name */
extern Datum jt_jsonb_set(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_path(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_insert(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_concat(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_array(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_PARTIAL_UPDATE_H */
