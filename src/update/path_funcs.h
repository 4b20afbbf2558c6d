/*-------------------------------------------------------------------------
 *
 * path_funcs.h
 *	  jsonb_set(), jsonb_insert(), #- and jsonb - text on a stored document
 *	  (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/path_funcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PATH_FUNCS_H
#define JSONB_TOASTER_PATH_FUNCS_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins of the same name */
extern Datum jt_jsonb_set(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete_path(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_insert(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_delete(PG_FUNCTION_ARGS);

/* doc[path] = value, as jsonb subscripting assigns */
extern Datum jt_subscript_set(Datum doc, const Datum *path, int npath,
							  Datum value);

#endif							/* JSONB_TOASTER_PATH_FUNCS_H */
