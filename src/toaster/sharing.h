/*-------------------------------------------------------------------------
 *
 * sharing.h
 *	  Parts shared between the versions of a row (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/sharing.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SHARING_H
#define JSONB_TOASTER_SHARING_H

#include "lib/stringinfo.h"
#include "utils/rel.h"

#include "format/skeleton.h"

typedef struct JtOldParts JtOldParts;

extern JtOldParts *jt_old_parts_open(Relation rel, struct varlena *oldvalue,
									 uint32 new_version);
extern void jt_old_parts_rehash(const JtOldParts *old,
								const struct varlena *raw, uint32 *hash);
extern void jt_old_parts_prefetch(JtOldParts *old, const JtPartEntry *ranges,
								  uint32 n);
extern bool jt_old_parts_take(JtOldParts *old, const JtPartEntry *range,
							  const struct varlena *raw,
							  JtPartEntry *stored);
extern bool jt_parts_keep_too_many_dead(const JtPartEntry *ranges,
										uint32 n, uint64 other_live);
extern bool jt_old_parts_take_as_delta(JtOldParts *old,
									   const struct varlena *raw,
									   uint32 budget, StringInfo literal,
									   uint32 *first, uint32 *removed,
									   JtPartEntry *base);

/* The parts a new row version took over from the old one. */
typedef struct JtKeptParts
{
	Oid		   *valueids;		/* sorted */
	uint32		nvalues;
} JtKeptParts;

extern void jt_value_pointer(const JtPartEntry *range, Oid toastrelid,
							 varatt_external *ext);
extern uint32 jt_pointer_parts(struct varlena *pointer, Oid *toastrelid,
							   JtPartEntry **ranges);
extern JtKeptParts *jt_kept_parts(struct varlena *replacement, Oid toastrelid);
extern bool jt_part_is_kept(const JtKeptParts *kept, Oid valueid);

#endif							/* JSONB_TOASTER_SHARING_H */
