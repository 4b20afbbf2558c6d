/*-------------------------------------------------------------------------
 *
 * containment.h
 *	  jsonb @> jsonb and jsonb <@ jsonb run on the part of the document an
 *	  object pattern names.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/containment.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_CONTAINMENT_H
#define JSONB_TOASTER_CONTAINMENT_H

#include "fmgr.h"

/* same arguments, results and errors as jsonb_contains, jsonb_contained */
extern Datum jt_jsonb_contains(PG_FUNCTION_ARGS);
extern Datum jt_jsonb_contained(PG_FUNCTION_ARGS);

#endif							/* JSONB_TOASTER_CONTAINMENT_H */
