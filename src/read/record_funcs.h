/*-------------------------------------------------------------------------
 *
 * record_funcs.h
 *	  jsonb_to_record() and jsonb_populate_record() run on the fields of
 *	  the document their record type names.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/record_funcs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_RECORD_FUNCS_H
#define JSONB_TOASTER_RECORD_FUNCS_H

#include "fmgr.h"

/* same arguments, results and errors as the builtins without "jt_" */
extern Datum jt_jsonb_to_record(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_populate_record(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_populate_record_valid(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_RECORD_FUNCS_H */
