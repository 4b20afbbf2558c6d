/*-------------------------------------------------------------------------
 *
 * part_change.h
 *	  The change of one part of a stored document: the part read and
 *	  changed, a key spliced into an object, the patched skeleton returned
 *	  (patched servers only).  update/'s other files use it.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/part_change.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_CHANGE_H
#define JSONB_TOASTER_PART_CHANGE_H

#include "format/skeleton.h"

/*
 * Where a part's root object lies in the flattened document: its key
 * bytes, and the bytes its values take (padding included) for each of the
 * four positions modulo 4 they may start at, since jsonb's writer starts
 * every numeric and container on a 4-byte boundary of the document.
 */
typedef struct JtPartLayout
{
	uint32		count;			/* key/value pairs */
	int64		key_bytes;
	uint64		value_end[4];	/* from positions 0, 1, 2, 3 */
	JtNode	   *entries;		/* the keys, then the values, for deltas */
} JtPartLayout;

/* What jt_splice_object() did: the pair at index set, added or removed. */
typedef struct JtSplice
{
	uint32		index;			/* of that pair, in both objects */
	bool		removed;		/* the old object has a pair there */
	bool		added;			/* the new object has one */
	uint32		keylen;
	JtNodeKind	value_kind;		/* the new pair's value, if added */
	uint32		value_length;
} JtSplice;

/* A part read for a change. */
typedef struct JtFetchedPart
{
	struct varlena *content;	/* what it reads as */
	struct varlena *base;		/* what is stored for it: itself, or the base
								 * it is a delta of */
	uint32		count;			/* pairs */
	bool		described;		/* layout is set */
	JtPartLayout layout;
} JtFetchedPart;

/*
 * Where the reference whose part a change replaces lies: the root of the
 * skeleton, or a value of a root object kept in the tree.
 */
typedef struct JtRefSite
{
	bool		is_root;
	uint32		offset;			/* of the reference, in the tree */
	uint32		parts_before;	/* parts flattened before its first */
} JtRefSite;

/* part_change.c */

/* read part r of ref for a change, checked (and laid out if describe) */
extern void jt_fetch_part(JtSkeleton *skel, const JtRef *ref, uint32 r,
						  bool describe, JtFetchedPart *old);

/* could a change of delta bytes take the document past jsonb's limit? */
extern bool jt_might_overflow(struct varlena *pointer, int64 delta,
							  uint32 count);

/* an object with one key set, added or removed; NULL if unchanged */
extern char *jt_splice_object(JtSource *src, const JtNode *object,
							  const char *key, uint32 keylen, JtSource *vsrc,
							  const JtNode *vnode, bool create, uint32 *len,
							  JtSplice *splice);

/* a part spliced as jt_splice_object() says; itself if unchanged */
extern struct varlena *jt_splice_part(struct varlena *part, const char *key,
									  uint32 keylen, JtSource *vsrc,
									  const JtNode *vnode, bool create,
									  JtSplice *splice);

/* the document made by putting newpart in place of part r of the value */
extern struct varlena *jt_apply_patch(struct varlena *pointer,
									  JtSkeleton *skel, const JtRef *ref,
									  const JtRefSite *site, uint32 r,
									  const JtFetchedPart *old,
									  struct varlena *newpart,
									  const JtSplice *splice);


/* the stored value again, as a result that is the caller's to keep */
extern struct varlena *jt_copy_of_pointer(const struct varlena *pointer);

#ifdef USE_ASSERT_CHECKING
/* check that a returned pointer tells the size flattening gives */
extern void jt_check_told_size(struct varlena *pointer, JtSkeleton *patched,
							   uint32 r, struct varlena *newpart,
							   uint64 rawsize, const char *what);
#endif

/* tree_change.c */


#endif							/* JSONB_TOASTER_PART_CHANGE_H */
