/*-------------------------------------------------------------------------
 *
 * pointer.c
 *	  The jsonb toaster's custom TOAST pointers: parsing one, and making one
 *	  from a skeleton (patched servers only).
 *
 * A pointer is core's custom TOAST header (toaster id, format version, raw
 * and stored sizes) followed by the skeleton's payload: JtSkeletonHeader,
 * the tree, then the delta area (format.h, delta.h).  Nothing here reads
 * a part or a setting.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/pointer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "format/delta.h"
#include "format/pointer.h"

/*
 * Parse one of our pointers (unaligned, as stored).  Version 2 is version
 * 1 with deltas (delta.h), and only pointers holding some were written as
 * version 2; versions 3 and 4 (format.h) may hold deltas or not.
 */
void
jt_parse_pointer(struct varlena *attr, JtSkeleton *skel)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (header.va_version < JT_SKELETON_VERSION_FIRST ||
		header.va_version > JT_SKELETON_VERSION_LATEST)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unsupported jsonb_toaster format version %d",
						header.va_version),
				 errdetail("This version of jsonb_toaster reads format versions %d to %d.",
						   JT_SKELETON_VERSION_FIRST, JT_SKELETON_VERSION_LATEST)));
	if (header.va_size < VARHDRSZ_CUSTOM)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The pointer is shorter than its header.")));
	jt_skeleton_parse(skel, VARDATA_CUSTOM(attr),
					  header.va_size - VARHDRSZ_CUSTOM, header.va_version);
	if (header.va_rawsize > 0)
		skel->flat_size = (uint32) header.va_rawsize;
	if (header.va_version < JT_SKELETON_VERSION_LAYOUTS &&
		(skel->ndeltas > 0) != (header.va_version == JT_SKELETON_VERSION_DELTAS))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("A pointer of format version %d %s deltas.",
						   header.va_version,
						   skel->ndeltas > 0 ? "holds" : "holds no")));
}

/*
 * The TOAST bytes the parts of stored pointer pointer take (its stored size
 * less its own), less dropped of them.
 */
static uint64
stored_outside_but(const struct varlena *pointer, uint64 dropped)
{
	varatt_custom header;
	uint64		stored_outside;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	stored_outside = header.va_storedsize - header.va_size;
	if (dropped > stored_outside)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("Its parts take more bytes than its stored size.")));
	return stored_outside - dropped;
}

/*
 * A pointer of format version version: hdr, in_row bytes of tree (or, for
 * a tree outside the row, its part's entry), deltas_len of delta area,
 * stored_outside bytes of TOAST.
 */
static struct varlena *
make_pointer(const JtSkeletonInfo *hdr, const char *in_row, uint32 in_row_len,
			 const char *deltas, uint32 deltas_len, int32 rawsize,
			 uint64 stored_outside, uint32 version)
{
	Size		size = VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader) +
		in_row_len + deltas_len;
	struct varlena *result;

	result = jt_custom_pointer_new(size, rawsize, size + stored_outside,
								   JSONB_TOASTER_ID, version);
	jt_payload_write_info(VARDATA_CUSTOM(result), hdr);
	if (in_row_len > 0)
		memcpy(VARDATA_CUSTOM(result) + sizeof(JtSkeletonHeader), in_row,
			   in_row_len);
	if (deltas_len > 0)
		memcpy(VARDATA_CUSTOM(result) + sizeof(JtSkeletonHeader) + in_row_len,
			   deltas, deltas_len);
	return result;
}

/*
 * Our pointer, for a tree (and a delta area of deltas_len bytes after it)
 * whose parts take stored_outside bytes of TOAST, in format version
 * version.
 */
struct varlena *
jt_make_pointer(const JtSkeletonInfo *hdr, const char *tree,
				const char *deltas, uint32 deltas_len, int32 rawsize,
				uint64 stored_outside, uint8 version)
{
	Assert(!hdr->tree_outside && !hdr->tree_folded);
	return make_pointer(hdr, tree, hdr->tree_size, deltas, deltas_len,
						rawsize, stored_outside, version);
}

/*
 * A folded inline skeleton (format version 8): hdr, then datum, whose raw
 * bytes are the tree (hdr's tree_size) and the parts after it.
 */
struct varlena *
jt_make_pointer_folded(const JtSkeletonInfo *hdr, const struct varlena *datum,
					   int32 rawsize)
{
	Assert(hdr->tree_folded && hdr->inline_parts && !hdr->tree_outside);
	return make_pointer(hdr, NULL, 0, (const char *) datum, VARSIZE(datum),
						rawsize, 0, JT_SKELETON_VERSION_FOLDED);
}

/*
 * A pointer whose tree lies outside the row (format version 7, or the
 * later version given): the entry of the part holding the tree (tree_size
 * bytes, hdr's), then edits_len bytes of edits of that tree
 * (tree_edits.h), if any, then the delta area; stored_outside counts the
 * tree part's bytes too.
 */
struct varlena *
jt_make_pointer_tree_outside(const JtSkeletonInfo *hdr,
							 const JtPartEntry *tree_entry,
							 const char *edits, uint32 edits_len,
							 const char *deltas, uint32 deltas_len,
							 int32 rawsize, uint64 stored_outside,
							 uint8 at_least)
{
	uint32		version = Max(at_least, JT_SKELETON_VERSION_TREE_OUTSIDE);
	JtSkeletonInfo info = *hdr;
	StringInfoData in_row;
	struct varlena *result;

	Assert(jt_entry_size(version) == sizeof(JtRefRangeUnits) &&
		   !hdr->inline_parts);
	initStringInfo(&in_row);
	enlargeStringInfo(&in_row, sizeof(JtRefRangeUnits));
	jt_entry_write(in_row.data, version, tree_entry);
	in_row.len = sizeof(JtRefRangeUnits);
	if (edits_len > 0)
	{
		appendBinaryStringInfo(&in_row, (const char *) &edits_len,
							   sizeof(uint32));
		appendBinaryStringInfo(&in_row, edits, edits_len);
	}
	info.tree_outside = true;
	info.tree_edited = edits_len > 0;
	result = make_pointer(&info, in_row.data, in_row.len, deltas, deltas_len,
						  rawsize, stored_outside, version);
	pfree(in_row.data);
	return result;
}

/*
 * The pointer stored_pointer, whose tree lies outside the row, with the tree
 * skel read in (jt_skeleton_attach_tree()) in it: what the update paths
 * edit.  It no longer names the part holding the tree.
 */
struct varlena *
jt_pointer_with_tree(const struct varlena *stored_pointer,
					 const JtSkeleton *skel)
{
	varatt_custom header;
	JtSkeletonInfo info = skel->hdr;
	const char *payload = VARDATA_CUSTOM(stored_pointer);
	uint32		payload_len = VARSIZE_EXTERNAL(stored_pointer) - VARHDRSZ_CUSTOM;
	uint32		in_row = sizeof(JtSkeletonHeader) + jt_entry_size(skel->version);
	uint64		stored_outside;

	if (skel->hdr.tree_edited)
		in_row += sizeof(uint32) + skel->tree_edits_len;

	/* jt_skeleton_parse() checked that the entry fits in the payload */
	Assert(skel->hdr.tree_outside && !skel->tree_missing &&
		   payload_len >= in_row);
	VARATT_CUSTOM_GET_HEADER(header, stored_pointer);
	stored_outside = stored_outside_but(stored_pointer,
										jt_entry_stored_share(&skel->tree_entry));
	info.tree_outside = false;
	info.tree_edited = false;
	return make_pointer(&info, skel->tree, skel->hdr.tree_size,
						payload + in_row, payload_len - in_row,
						header.va_rawsize, stored_outside,
						header.va_version);
}

/*
 * The format version of a pointer made from stored pointer old by changing
 * some of its parts: the old one's, whose hashes the other parts keep, or
 * version 3 for the first two, whose readers know no deltas or layouts.
 */
uint8
jt_patched_version(const struct varlena *old)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, old);
	return Max(header.va_version, JT_SKELETON_VERSION_LAYOUTS);
}

/*
 * A pointer to a skeleton (hdr, tree, a delta area of deltas_len bytes)
 * made from old_pointer by changing some of what it keeps in the row: the
 * TOAST bytes it refers to are old_pointer's, but those of the parts it
 * no longer refers to (dropped_stored bytes), and so is its format
 * version (jt_patched_version()).
 */
struct varlena *
jt_pointer_over_fewer(const struct varlena *old_pointer,
					  const JtSkeletonInfo *hdr, const char *tree,
					  const char *deltas, uint32 deltas_len, int32 rawsize,
					  uint64 dropped_stored)
{
	return jt_make_pointer(hdr, tree, deltas, deltas_len, rawsize,
						   stored_outside_but(old_pointer, dropped_stored),
						   jt_patched_version(old_pointer));
}

/* The same, referring to every part of old_pointer. */
struct varlena *
jt_pointer_over(const struct varlena *old_pointer, const JtSkeletonInfo *hdr,
				const char *tree, const char *deltas, uint32 deltas_len,
				int32 rawsize)
{
	return jt_pointer_over_fewer(old_pointer, hdr, tree, deltas, deltas_len,
								 rawsize, 0);
}

/*
 * The payload of one of our pointers (JtSkeletonHeader, tree, delta area),
 * unaligned as stored, and its length.
 */
const char *
jt_pointer_payload(const struct varlena *pointer, uint32 *len)
{
	if (len)
		*len = VARSIZE_EXTERNAL(pointer) - VARHDRSZ_CUSTOM;
	return VARDATA_CUSTOM(pointer);
}

/* The format version of one of our pointers, as stored. */
uint32
jt_pointer_version(const struct varlena *pointer)
{
	varatt_custom header;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	return header.va_version;
}

/* Does one of our pointers keep its tree outside the row? */
bool
jt_pointer_tree_outside(const struct varlena *pointer)
{
	JtSkeletonInfo info;

	jt_payload_read_info(VARDATA_CUSTOM(pointer), &info);
	return info.tree_outside;
}

/* The TOAST relation holding the parts of one of our pointers. */
Oid
jt_pointer_toastrelid(const struct varlena *pointer)
{
	JtSkeletonInfo info;

	jt_payload_read_info(VARDATA_CUSTOM(pointer), &info);
	return info.toastrelid;
}
