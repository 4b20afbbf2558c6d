/*-------------------------------------------------------------------------
 *
 * skeleton_build.h
 *	  Cut a jsonb document into a skeleton and parts.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/skeleton_build.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_SKELETON_BUILD_H
#define JSONB_TOASTER_SKELETON_BUILD_H

#include "lib/stringinfo.h"

/* values shorter than this never leave the skeleton */
#define JT_MIN_PART_SIZE	32

/* the bounds of a range's size (see plan_ranges()) */
#define JT_RANGE_MIN(range_size)	((range_size) / 4)
#define JT_RANGE_MAX(range_size)	((uint64) (range_size) * 4)

typedef struct JtBuildPart
{
	struct varlena *raw;		/* the part's content, a jsonb datum */
	int			range_offset;	/* its JtPartEntry in the tree */
} JtBuildPart;

typedef struct JtBuildResult
{
	StringInfoData tree;		/* the skeleton's tree */
	JtBuildPart *parts;			/* in document order */
	uint32		nparts;
	uint32		maxparts;
	uint32		version;		/* the format version written */
	bool		keeps_fields;	/* a value of the root stays in the tree */
	bool		opened;			/* a value stays in the tree with references
								 * below it (format version 8) */
} JtBuildResult;

/* How jt_build_skeleton() cuts a document. */
typedef struct JtBuildOptions
{
	int32		target;			/* the size the tree should not exceed */
	uint32		range_size;		/* the size of a range wanted */
	uint32		whole_up_to;	/* containers this long stay one range */
	bool		large_dirs;		/* large containers' directories may take
								 * the tree out of the row */
	bool		open_values;	/* values of the root may be opened */
	uint32		version;		/* the format version written */
} JtBuildOptions;

extern bool jt_build_skeleton(const struct varlena *doc,
							  const JtBuildOptions *opts,
							  JtBuildResult *result);
extern void jt_build_set_stored(JtBuildResult *result, uint32 i,
								const JtPartEntry *stored);
extern void jt_build_entry(const JtBuildResult *result, uint32 i,
						   JtPartEntry *entry);
extern char *jt_build_payload(const JtBuildResult *result, Oid toastrelid,
							  uint32 *len);

#endif							/* JSONB_TOASTER_SKELETON_BUILD_H */
