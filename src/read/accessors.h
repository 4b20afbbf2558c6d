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

#include "read/datum_source.h"

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

/* one step of a path: a key (key != NULL) or an array index */
typedef struct JtPathStep
{
	const char *key;
	uint32		keylen;
	uint32		index;
} JtPathStep;

/* where steps followed from a document's root lead (jt_reach()) */
typedef struct JtReach
{
	JtDatumSource src;			/* the document's */
	JtDatumSource *cur;			/* the node's: src, or a part read */
	JtNode		node;
	int			taken;			/* steps taken */
	bool		missing;		/* the next step names nothing there */
	uint32		count;			/* then, if it was an index: the array's size */
} JtReach;

extern void jt_reach(Datum doc, const JtPathStep *steps, int nsteps,
					 JtReach *r);
extern Datum jt_reach_result(JtReach *r);
extern bool jt_reach_bytes(JtReach *r, uint32 *type, const char **data,
						   uint32 *len);
extern void jt_reach_close(JtReach *r);
extern Datum jt_follow_steps(Datum doc, const JtPathStep *steps, int nsteps,
							 int *taken, bool *missing, uint32 *count);

/* doc #> path (#>> if as_text), the path as text datums, not empty */
extern Datum jt_get_path(Datum doc, const Datum *path, int npath,
						 bool as_text, bool *isnull);

#endif							/* JSONB_TOASTER_ACCESSORS_H */
