/*-------------------------------------------------------------------------
 *
 * tree_outside.c
 *	  Where the toaster puts a tree that may leave the row (format
 *	  version 7): a part of the TOAST value a store writes anyway, or, when
 *	  a store writes no part, the tree part of the version it replaces with
 *	  edits of it kept in the row (tree_edits.h).  Otherwise the row.
 *
 * A tree that is one reference (a root left whole, as an object of a
 * thousand short fields) is a directory every reader fetches a part
 * through anyway; in the row, every new row version would carry it, an
 * UPDATE of another column included, where stock keeps an 18-byte
 * pointer.  Written alone, it would take a TOAST value of its own at
 * every UPDATE whose change is kept as a delta.  A tree holding the
 * directory of a container of many megabytes leaves the row whatever else
 * it holds: no row has room for it.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/tree_outside.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/rel.h"

#include "format/part.h"
#include "format/pointer.h"
#include "format/skeleton.h"
#include "format/tree_edits.h"
#include "toast/pointer_open.h"
#include "toaster/settings.h"
#include "toaster/tree_outside.h"

/*
 * A tree of at least this many bytes may leave the row: a directory of
 * several parts.
 */
#define JT_TREE_OUTSIDE_MIN		160

/*
 * Must a tree of tree_size bytes lie outside the row?  One holding a
 * directory no row should carry (JT_ROW_MAX_RANGES), which only a builder
 * allowed to write format version 7 makes, and what is made of it keeps.
 */
bool
jt_tree_must_leave_row(const char *tree, uint32 tree_size)
{
	uint64		bytes;

	return jt_tree_directories_over(tree, tree_size, JT_ROW_MAX_RANGES,
									&bytes) > 0;
}

/*
 * May a tree of tree_size bytes lie outside the row?  A tree that must, and
 * a tree that is one reference, whose reads fetch a part anyway.  (Logical
 * decoding, which cannot read TOAST, cuts it from the values the decoded
 * transaction holds: the toaster logs those it shares in logically logged
 * tables.)
 */
bool
jt_tree_may_leave_row(const char *tree, uint32 tree_size)
{
	uint32		root_entry;

	if (jt_tree_must_leave_row(tree, tree_size))
		return true;
	if (jt_format_version < JT_SKELETON_VERSION_TREE_OUTSIDE ||
		tree_size < JT_TREE_OUTSIDE_MIN)
		return false;
	memcpy(&root_entry, tree, sizeof(uint32));
	return (root_entry & JT_JENTRY_TYPE_MASK) == JT_JENTRY_REF;
}

/*
 * The bytes of a tree of tree_size bytes that count against the row's
 * budget: all of them, but for directories so wide that the tree must
 * leave the row, which count as the directory entry of the part holding
 * it.  The rest is bounded as if it stayed in the row, as the builder
 * bounds it (what the tree keeps besides such directories is read with
 * every one of them).
 */
uint32
jt_tree_budget_bytes(const char *tree, uint32 tree_size)
{
	uint64		bytes;

	if (jt_tree_directories_over(tree, tree_size, JT_ROW_MAX_RANGES,
								 &bytes) == 0)
		return tree_size;
	return (uint32) (tree_size - bytes) +
		jt_entry_size(JT_SKELETON_VERSION_TREE_OUTSIDE);
}

/*
 * The bytes of payload_len, a payload holding its tree (header, tree,
 * what follows), that count against the row's budget.
 */
uint32
jt_payload_budget_bytes(const char *payload, uint32 payload_len)
{
	JtSkeletonInfo hdr;

	jt_payload_read_info(payload, &hdr);
	if (hdr.tree_outside || hdr.tree_folded)
		return payload_len;
	return payload_len - hdr.tree_size +
		jt_tree_budget_bytes(payload + JT_PAYLOAD_TREE_OFFSET, hdr.tree_size);
}

/*
 * Add a tree to the value writer gathers, as its last part (its entries
 * naming parts of that value say value id 0 and size 0, format.h): the
 * part's number, or UINT32_MAX if the value has no room for it.
 */
uint32
jt_tree_add_part(JtPartWriter *writer, const char *tree, uint32 tree_size)
{
	struct varlena *raw = palloc(VARHDRSZ + tree_size);
	uint32		part;

	SET_VARSIZE(raw, VARHDRSZ + tree_size);
	memcpy(VARDATA(raw), tree, tree_size);
	part = jt_part_writer_add_last(writer, raw);
	pfree(raw);
	return part;
}

/*
 * The pointer whose tree (hdr's size) writer wrote as part tree_part, once
 * the writer is finished: the part's entry, then the delta area.
 * stored_outside counts the other parts' TOAST bytes.  version: the
 * format version the tree asks for (7 at least).
 */
struct varlena *
jt_tree_part_pointer(const JtSkeletonInfo *hdr, const JtPartWriter *writer,
					 uint32 tree_part, const char *tree, const char *deltas,
					 uint32 deltas_len, int32 rawsize, uint64 stored_outside,
					 uint8 version)
{
	JtPartEntry tree_entry = {0};
	struct varlena *result;

	jt_entry_set_location(&tree_entry, jt_part_writer_entry(writer, tree_part));
	tree_entry.rawsize = (int32) (hdr->tree_size + VARHDRSZ);
	tree_entry.hash = jt_part_hash(JT_SKELETON_VERSION_TREE_OUTSIDE, tree,
								   hdr->tree_size);
	stored_outside += jt_entry_stored_share(&tree_entry);
	result = jt_make_pointer_tree_outside(hdr, &tree_entry, NULL, 0, deltas,
										  deltas_len, rawsize, stored_outside,
										  version);
	jt_opened_as_written(result, tree, true);
	return result;
}

/*
 * pointer, a pointer with its tree in the row about to be stored in place
 * of oldvalue, with its tree outside: oldvalue's tree part and the edits
 * that make pointer's tree of it.  NULL when oldvalue's tree is in the
 * row, or of another size, or the edits would take more than half the
 * tree's bytes, or with the entry and the delta area more than target
 * bytes (a tree that must leave the row may be far larger than the row's
 * budget), or pointer's tree may not leave the row.
 */
struct varlena *
jt_tree_edited_pointer(Relation rel, struct varlena *pointer,
					   struct varlena *oldvalue, int32 target)
{
	JtSkeleton	stored;
	JtSkeleton	opened;
	JtSkeletonInfo hdr;
	varatt_custom header;
	const char *payload;
	uint32		payload_len;
	const char *tree;
	const char *old_tree;
	int64		max_len;
	StringInfoData edits;
	uint64		stored_outside;
	struct varlena *result;

	if (oldvalue == NULL || !jt_is_pointer(oldvalue) ||
		jt_pointer_version(pointer) < JT_SKELETON_VERSION_UNITS)
		return NULL;
	payload = jt_pointer_payload(pointer, &payload_len);
	jt_payload_read_info(payload, &hdr);
	tree = payload + JT_PAYLOAD_TREE_OFFSET;
	if (hdr.tree_outside || hdr.inline_parts ||
		!jt_tree_may_leave_row(tree, hdr.tree_size))
		return NULL;
	jt_parse_pointer(oldvalue, &stored);
	if (!stored.hdr.tree_outside || stored.hdr.tree_size != hdr.tree_size ||
		stored.hdr.toastrelid != hdr.toastrelid)
		return NULL;

	/*
	 * The entry, the edits and their length word in at most half the tree,
	 * and in the target with the delta area
	 */
	max_len = Min((int64) hdr.tree_size / 2,
				  (int64) target - (payload_len - JT_PAYLOAD_TREE_OFFSET -
									hdr.tree_size)) -
		(int64) sizeof(JtRefRangeUnits) - (int64) sizeof(uint32);
	if (max_len <= 0)
		return NULL;
	old_tree = jt_pointer_payload(jt_open_pointer(oldvalue, &opened), NULL) +
		JT_PAYLOAD_TREE_OFFSET;
	initStringInfo(&edits);
	if (!jt_tree_edits_make(old_tree, tree, hdr.tree_size, stored.tree_edits,
							stored.tree_edits_len, (uint32) max_len, &edits))
		return NULL;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	stored_outside = header.va_storedsize - header.va_size +
		jt_entry_stored_share(&stored.tree_entry);
	result = jt_make_pointer_tree_outside(&hdr, &stored.tree_entry,
										  edits.data, edits.len,
										  tree + hdr.tree_size,
										  payload_len - JT_PAYLOAD_TREE_OFFSET -
										  hdr.tree_size,
										  header.va_rawsize, stored_outside,
										  header.va_version);
	jt_opened_as_written(result, tree, false);
	return result;
}
