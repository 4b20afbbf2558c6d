/*-------------------------------------------------------------------------
 *
 * delta.h
 *	  Parts kept as a delta of the part they replaced.
 *
 * An UPDATE that changes one part of a stored document by a small edit
 * (jsonb_set() of one element, - of one key, ...) can leave the old part
 * where it is and record, in the new pointer, how the new content differs
 * from it: the old part's entries [0, first), then the entries of a small
 * literal container, then its entries [first + removed, n).  Nothing is
 * written to TOAST, and no TOAST page is touched: the UPDATE logs its heap
 * tuple only.  The old part becomes the new version's own, its base.
 *
 * The delta area follows the tree in the payload (format version 2 was the
 * first to have one; version 3 may too), one record per part kept as a
 * delta:
 *
 *		JtDeltaHeader		the base and the edit
 *		literal				literal_len bytes: a container of the part's
 *							kind holding the entries put in, padded to 4
 *
 * A record whose literal replaces every entry of its base is a
 * replacement: jt_delta_make() never makes one (it keeps half the base at
 * least), but a pointer jsonb_set() returns holds one when its change is
 * too large for a delta, and the toaster writes the literal as a part of
 * its own when it adopts that pointer (toaster.c); nothing stores one.
 *
 * The part's directory entry describes its content (raw size, root
 * header, hash), as for any part, since that is what readers navigate by;
 * its extinfo and value id are the base's, whose own raw size, header and
 * hash the record keeps.  Readers ask jt_stored_range() for the entry of
 * what is stored, and jt_read_part_content() for the content.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/delta.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DELTA_H
#define JSONB_TOASTER_DELTA_H

#include "lib/stringinfo.h"

#include "format/skeleton.h"

/* the format of pointers that hold deltas (varatt_custom.va_version) */
#define JT_SKELETON_VERSION_DELTAS	2

/* literals of at most this many bytes: a quarter of a range */
#define JT_DELTA_BUDGET(range_size)	((range_size) / 4)

/* The most a delta record takes besides its literal: header and padding. */
#define JT_DELTA_RECORD_OVERHEAD	(sizeof(JtDeltaHeaderPacked) + sizeof(uint32) - 1)

/* A record's header, as stored before format version 5 */
typedef struct JtDeltaHeader
{
	Oid			valueid;		/* the base, a part of this skeleton */
	int32		base_rawsize;	/* the base's directory entry, as stored */
	uint32		base_header;
	uint32		base_hash;
	uint32		first;			/* base entries before the literal's */
	uint32		removed;		/* base entries the literal's replace */
	uint32		literal_len;	/* bytes of literal, padding excluded */
} JtDeltaHeader;

/* and from version 5, where the base lies in its TOAST value */
typedef struct JtDeltaHeaderPacked
{
	Oid			valueid;
	uint32		base_offset;
	int32		base_rawsize;
	uint32		base_header;
	uint32		base_hash;
	uint32		first;
	uint32		removed;
	uint32		literal_len;
} JtDeltaHeaderPacked;

/* A delta record, checked and copied out of the payload. */
typedef struct JtDelta
{
	JtDeltaHeaderPacked hdr;	/* base_offset 0 before version 5 */
	uint32		header_size;	/* as stored */
	const char *literal;		/* in the payload */
} JtDelta;

extern void jt_delta_parse_area(JtSkeleton *skel, const char *area,
								uint32 len);
extern const JtDelta *jt_delta_for(const JtSkeleton *skel,
								   const JtPartEntry *range);
extern JtPartEntry jt_stored_range(const JtSkeleton *skel,
								   const JtPartEntry *range);
extern struct varlena *jt_delta_apply(const JtDelta *delta,
									  const JtPartEntry *range,
									  const struct varlena *base,
									  uint32 version);
extern bool jt_delta_make(const struct varlena *base,
						  const JtNode *base_entries,
						  const struct varlena *target,
						  const JtNode *target_entries, uint32 same_head,
						  uint32 same_tail, uint32 budget,
						  StringInfo literal, uint32 *first,
						  uint32 *removed);
extern void jt_delta_append(StringInfo area, uint32 version,
							const JtPartEntry *base, uint32 first,
							uint32 removed, const char *literal,
							uint32 literal_len);
extern void jt_delta_area_copy(const JtSkeleton *skel, uint64 except,
							   bool replacements, StringInfo area);
extern void jt_delta_area_copy_except(const JtSkeleton *skel,
									  const uint64 *except, uint32 nexcept,
									  bool replacements, StringInfo area);

extern uint32 jt_delta_carried_len(const JtSkeleton *skel, uint64 except);

/* The part id (jt_part_id()) of a record's base. */
static inline uint64
jt_delta_base_id(const JtDelta *delta)
{
	return ((uint64) delta->hdr.valueid << 32) | delta->hdr.base_offset;
}

/* Does a record replace every entry of its base?  See above. */
static inline bool
jt_delta_is_replacement(const JtDelta *delta)
{
	return delta->hdr.first == 0 &&
		delta->hdr.removed == (delta->hdr.base_header & JT_CONTAINER_COUNT_MASK);
}

/* Bytes a record takes in the delta area. */
static inline uint64
jt_delta_record_size(const JtDelta *delta)
{
	return delta->header_size + INTALIGN((uint64) delta->hdr.literal_len);
}

#endif							/* JSONB_TOASTER_DELTA_H */
