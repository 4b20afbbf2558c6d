/*-------------------------------------------------------------------------
 *
 * pointer_open.c
 *	  Open a stored pointer of ours, reading its tree where it lies outside
 *	  the row (format version 7, format.h).
 *
 * Every reader of a stored pointer opens it here, so that whatever follows
 * sees a tree in memory, as in a pointer that keeps it in the row: the
 * pointer it is given back is then one with the tree in it, which the
 * update paths edit as they edit any other.  The skeleton still lists the
 * part holding the tree among the stored pointer's parts (the stored value
 * owns it), but a pointer made from it does not name it.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/pointer_open.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/snapmgr.h"

#include "format/part.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"

/*
 * Parse our pointer attr into skel, reading its tree from TOAST if it lies
 * outside the row; the pointer skel describes: attr, or a copy with the
 * tree in it, in the current memory context.
 */
struct varlena *
jt_open_pointer(struct varlena *attr, JtSkeleton *skel)
{
	JtPartEntry tree_entry;
	struct varlena *raw;
	struct varlena *with_tree;
	uint32		len;

	jt_parse_pointer(attr, skel);
	if (!skel->tree_missing)
		return attr;

	/*
	 * Logical decoding cannot read TOAST relations, and the toaster keeps
	 * trees in the row of the tables it decodes (logically logged ones).
	 */
	if (HistoricSnapshotActive())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot decode a jsonb_toaster value whose tree lies outside the row"),
				 errdetail("It was stored while the table was not logically logged.")));

	tree_entry = skel->tree_entry;
	raw = jt_read_part(&tree_entry, skel->hdr.toastrelid);
	len = VARSIZE(raw) - VARHDRSZ;
	if (VARSIZE(raw) != (uint32) tree_entry.rawsize ||
		jt_part_hash(skel->version, VARDATA(raw), len) != tree_entry.hash)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The part holding its tree (toast value %u) is not the tree its pointer names.",
						   tree_entry.valueid)));
	jt_skeleton_attach_tree(skel, VARDATA(raw), len);
	with_tree = jt_pointer_with_tree(attr, skel);
	pfree(raw);

	jt_parse_pointer(with_tree, skel);
	skel->has_tree_entry = true;
	skel->tree_entry = tree_entry;
	return with_tree;
}
