/*-------------------------------------------------------------------------
 *
 * root_funcs.h
 *	  jsonb_typeof() and jsonb_array_length() answered from the root's
 *	  header.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/root_funcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_ROOT_FUNCS_H
#define JSONB_TOASTER_ROOT_FUNCS_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins without "jt_" */
extern Datum jt_jsonb_typeof(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_array_length(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_object_keys(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_ROOT_FUNCS_H */
