/*-------------------------------------------------------------------------
 *
 * key_funcs.h
 *	  jsonb || object and jsonb - text[] on a stored document (patched
 *	  servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/key_funcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_KEY_FUNCS_H
#define JSONB_TOASTER_KEY_FUNCS_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins of the same name */
extern Datum jt_jsonb_concat(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_array(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_KEY_FUNCS_H */
