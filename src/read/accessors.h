/*-------------------------------------------------------------------------
 *
 * accessors.h
 *	  jsonb accessors that read only the part of a document they need.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/accessors.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_ACCESSORS_H
#define JSONB_TOASTER_ACCESSORS_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins of the same name */
extern PGDLLEXPORT Datum jt_object_field(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_object_field_text(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_array_element(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_array_element_text(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_extract_path(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_extract_path_text(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_exists(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_exists_any(PG_FUNCTION_ARGS);
extern PGDLLEXPORT Datum jt_exists_all(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_ACCESSORS_H */
