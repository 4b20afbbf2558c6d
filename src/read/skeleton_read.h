/*-------------------------------------------------------------------------
 *
 * skeleton_read.h
 *	  Following a path through a value stored by the jsonb toaster, reading
 *	  only the parts on the path; for any other value, the steps of the
 *	  navigator.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/skeleton_read.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SKELETON_READ_H
#define JSONB_TOASTER_SKELETON_READ_H

#include "read/datum_source.h"

extern bool jt_step_key(JtDatumSource **cur, const JtNode *object,
						const char *key, uint32 keylen, JtNode *value);
extern bool jt_step_index(JtDatumSource **cur, const JtNode *array,
						  uint32 index, JtNode *element);
extern bool jt_step_has_string(JtDatumSource *cur, const JtNode *array,
							   const char *str, uint32 len);
extern void jt_resolve_scalar(JtDatumSource **cur, JtNode *node);
extern bool jt_node_needs_flatten(JtDatumSource *cur, const JtNode *node);
extern Datum jt_node_flatten(JtDatumSource *cur, const JtNode *node);

#endif							/* JSONB_TOASTER_SKELETON_READ_H */
