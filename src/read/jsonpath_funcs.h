/*-------------------------------------------------------------------------
 *
 * jsonpath_funcs.h
 *	  The jsonb_path_* functions and the @? and @@ operators, run on the
 *	  part of a document their path can reach.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/jsonpath_funcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_JSONPATH_FUNCS_H
#define JSONB_TOASTER_JSONPATH_FUNCS_H

#include "fmgr.h"
#include "utils/jsonpath.h"

/* same arguments, results and errors as the builtins without "jt_" */
extern Datum jt_jsonb_path_exists(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_exists_tz(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_exists_opr(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_match(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_match_tz(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_match_opr(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query_tz(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query_array(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query_array_tz(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query_first(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_path_query_first_tz(PG_FUNCTION_ARGS);

/* a SQL/JSON query function's context item, narrowed for its path */
extern Datum jt_narrow_path_item(Datum item, JsonPath *jp, List *item_paths);

#endif							/* JSONB_TOASTER_JSONPATH_FUNCS_H */
