/*-------------------------------------------------------------------------
 *
 * skeleton.c
 *	  Reading the jsonb toaster's skeletons: checking them, their
 *	  references, the sizes of their values flattened, and listing their
 *	  parts.
 *
 * See format.h for the format.  The tree of a skeleton is read with the
 * navigator, which checks every JEntry against the bounds of its
 * container; references are checked here, parts in part.c.  A part read whole is
 * checked against what its reference says of it (raw size, root header)
 * and its root's entries against its data before a byte of it is used, so
 * a part that was lost, truncated or cut differently raises an ERROR.  The
 * content hash is not recomputed on reads (see jt_part_check()): a part
 * swapped for another of the same size and count goes unnoticed, and a
 * container nested inside a part is handed to PostgreSQL as it is stored,
 * checked no more than PostgreSQL checks any stored jsonb.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/skeleton.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_compression.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"

#include "format/delta.h"
#include "format/skeleton.h"
#include "format/tree_edits.h"
#include "jsonb/jsonb_writer.h"
#include "support/compat.h"

static void parse_tree(JtSkeleton *skel);
static const char *unfold_tree(JtSkeleton *skel);
static bool alone_sizes_ok(const JtPartEntry *stored);
static bool lies_in_its_value(const JtPartEntry *stored);

static void
visit_nothing(void *arg, const JtRef *ref, List *path)
{
}

/*
 * The edits of an outside tree that follow its part's entry (entry_size
 * bytes) in payload: found, checked and noted in skel.  The bytes they take
 * with their length word.
 */
static uint32
tree_edits_in_row(JtSkeleton *skel, const char *payload, uint32 payload_len,
				  uint32 entry_size)
{
	uint64		at = (uint64) sizeof(JtSkeletonHeader) + entry_size;
	uint32		len;

	if (at + sizeof(uint32) > payload_len)
		jt_nav_corrupt(&skel->src, "the tree's edits lie outside the pointer");
	memcpy(&len, payload + at, sizeof(uint32));
	at += sizeof(uint32);
	if (len == 0 || len > payload_len - at)
		jt_nav_corrupt(&skel->src, "the tree's edits lie outside the pointer");
	jt_tree_edits_check(&skel->src, payload + at, len, skel->hdr.tree_size);
	skel->tree_edits = payload + at;
	skel->tree_edits_len = len;
	return sizeof(uint32) + len;
}

/*
 * Check a skeleton's payload, of format version version, and describe it.
 * The tree is read where it lies, so the payload must outlive skel; a
 * folded tree is decoded into the current memory context, which skel must
 * not outlive either (jt_skeleton_release() frees what skel allocated).
 * The tree's first word is the root's JEntry; the root follows it.
 */
void
jt_skeleton_parse(JtSkeleton *skel, const char *payload, uint32 payload_len,
				  uint32 version)
{
	uint32		in_row;			/* the tree's bytes in the row */
	const char *after;

	jt_memory_source(&skel->src, NULL, 0, true);
	skel->version = version;
	skel->flat_size = 0;
	skel->has_tree_entry = false;
	skel->tree_missing = false;
	skel->own_value.valueid = InvalidOid;
	if (payload_len < sizeof(JtSkeletonHeader))
		jt_nav_corrupt(&skel->src, "the pointer is shorter than its header");
	jt_payload_read_info(payload, &skel->hdr);
	if (skel->hdr.tree_size < 2 * sizeof(uint32))
		jt_nav_corrupt(&skel->src, "the tree is too short");
	in_row = skel->hdr.tree_size;
	skel->tree_edits = NULL;
	skel->tree_edits_len = 0;
	if (skel->hdr.tree_edited && !skel->hdr.tree_outside)
		jt_nav_corrupt(&skel->src, "a tree in the row has edits");
	if (skel->hdr.tree_outside)
	{
		if (!jt_version_has_tree_outside(version) || skel->hdr.inline_parts)
			jt_nav_corrupt(&skel->src, "a pointer of a format that has none keeps its tree outside the row");
		in_row = jt_entry_size(version);
		if (skel->hdr.tree_edited)
			in_row += tree_edits_in_row(skel, payload, payload_len, in_row);
	}
	if (skel->hdr.tree_folded)
	{
		if (!jt_version_may_fold(version))
			jt_nav_corrupt(&skel->src, "a pointer of a format that has none folds its tree");
		if (!skel->hdr.inline_parts || skel->hdr.tree_outside)
			jt_nav_corrupt(&skel->src, "a folded tree's parts are not in the pointer");
		/* the tree is the start of the inline datum's raw bytes */
		in_row = 0;
	}
	if (in_row > payload_len - sizeof(JtSkeletonHeader))
		jt_nav_corrupt(&skel->src, "the tree size does not match the pointer size");
	after = payload + sizeof(JtSkeletonHeader) + in_row;

	/*
	 * What follows the tree is the delta area (format version 2), or an
	 * inline skeleton's parts (format.h)
	 */
	skel->inline_area = NULL;
	skel->inline_len = 0;
	skel->inline_raw = NULL;
	skel->inline_parts_at = 0;
	if (skel->hdr.inline_parts)
	{
		uint32		len = payload_len - sizeof(JtSkeletonHeader) - in_row;

		if (!jt_version_packs(version))
			jt_nav_corrupt(&skel->src, "a pointer of a format that has none keeps its parts inline");
		if (len < VARHDRSZ || VARATT_IS_EXTERNAL(after) || VARSIZE_ANY(after) != len)
			jt_nav_corrupt(&skel->src, "the parts kept in the pointer are not a datum of its remaining bytes");
		skel->inline_area = after;
		skel->inline_len = len;
		skel->ndeltas = 0;
		skel->deltas = NULL;
	}
	else
		jt_delta_parse_area(skel, after,
							payload_len - sizeof(JtSkeletonHeader) - in_row);

	if (skel->hdr.tree_outside)
	{
		JtPartEntry *e = &skel->tree_entry;

		jt_entry_read(payload + sizeof(JtSkeletonHeader), version, e);
		if (skel->hdr.tree_size > MaxAllocSize - VARHDRSZ ||
			!OidIsValid(e->valueid) || e->header != 0 ||
			e->key_offset != 0 || e->key_length != 0 ||
			e->rawsize != (int32) (skel->hdr.tree_size + VARHDRSZ) ||
			jt_entry_extsize(e) == 0 || jt_entry_in_unit(e) ||
			!alone_sizes_ok(e) || !lies_in_its_value(e))
			jt_nav_corrupt(&skel->src, "the entry of the part holding the tree is impossible");
		skel->has_tree_entry = true;
		skel->tree_missing = true;
		skel->tree = NULL;
		/* nothing to walk before jt_skeleton_attach_tree() */
		memset(&skel->root, 0, sizeof(skel->root));
		return;
	}

	if (skel->hdr.tree_folded)
	{
		skel->tree = unfold_tree(skel);
		skel->inline_parts_at = skel->hdr.tree_size;
	}
	else
	{
		/* read in place: the navigator reads fields with memcpy */
		skel->tree = payload + sizeof(JtSkeletonHeader);
	}
	parse_tree(skel);
}

/*
 * An aligned copy of an inline skeleton's datum, checked so far as core's
 * decompression trusts it: a compressed one must hold its header, name a
 * method core knows and a raw size it can allocate.
 */
static struct varlena *
inline_datum_copy(const JtSkeleton *skel)
{
	struct varlena *stored = palloc(skel->inline_len);
	bool		ok = true;

	memcpy(stored, skel->inline_area, skel->inline_len);
	if (VARATT_IS_COMPRESSED(stored))
	{
		ToastCompressionId method;

		ok = skel->inline_len >= VARHDRSZ_COMPRESSED;
		method = ok ? VARDATA_COMPRESSED_GET_COMPRESS_METHOD(stored) :
			TOAST_INVALID_COMPRESSION_ID;
		ok = ok && (method == TOAST_PGLZ_COMPRESSION_ID ||
					method == TOAST_LZ4_COMPRESSION_ID) &&
			VARDATA_COMPRESSED_GET_EXTSIZE(stored) <= MaxAllocSize - VARHDRSZ;
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The parts kept in the pointer are not a compressed datum core can decode.")));
	return stored;
}

/*
 * The tree of a folded inline skeleton (format.h), decoded from the start of
 * its datum: a palloc'd copy of its tree_size bytes.  Only those are
 * decoded; the parts after them wait until one is read.
 */
static const char *
unfold_tree(JtSkeleton *skel)
{
	struct varlena *stored;
	struct varlena *prefix;
	char	   *tree;

	if (skel->inline_len < VARHDRSZ_COMPRESSED ||
		!VARATT_IS_4B_C(skel->inline_area))
		jt_nav_corrupt(&skel->src, "a folded tree is not the start of a compressed datum");
	stored = inline_datum_copy(skel);
	if (VARDATA_COMPRESSED_GET_EXTSIZE(stored) < skel->hdr.tree_size)
		jt_nav_corrupt(&skel->src, "a folded tree is longer than its datum");
	prefix = detoast_attr_slice(stored, 0, (int32) skel->hdr.tree_size);
	if (VARSIZE_ANY_EXHDR(prefix) != skel->hdr.tree_size)
		jt_nav_corrupt(&skel->src, "a folded tree decodes to fewer bytes than its size");
	tree = palloc(skel->hdr.tree_size);
	memcpy(tree, VARDATA_ANY(prefix), skel->hdr.tree_size);
	pfree(prefix);
	pfree(stored);
	return tree;
}

/*
 * Give a skeleton parsed with its tree outside the row (format version 7)
 * its tree, read from the part its entry names: tree_size bytes, which
 * skel may write to (entries naming the value holding the tree get its id
 * and size) and which must outlive it.
 */
void
jt_skeleton_attach_tree(JtSkeleton *skel, char *tree, uint32 len)
{
	Assert(skel->tree_missing);
	if (len != skel->hdr.tree_size)
		jt_nav_corrupt(&skel->src, "the part holding the tree is not the tree's size");
	skel->tree = tree;
	skel->tree_missing = false;
	parse_tree(skel);
	/* every reference read once, its entries' value id 0 replaced */
	skel->own_value = skel->tree_entry;
	jt_skeleton_walk(skel, visit_nothing, NULL);
	skel->own_value.valueid = InvalidOid;
	/* then the edits the row keeps, and every reference checked again */
	if (skel->tree_edits_len > 0)
	{
		jt_tree_edits_apply(skel->tree_edits, skel->tree_edits_len, tree);
		parse_tree(skel);
		jt_skeleton_walk(skel, visit_nothing, NULL);
	}
}

/*
 * Check the root of a tree of tree_size bytes (at least two words), which
 * src reads, and describe it.
 */
static void
describe_root(JtSource *src, const char *tree, uint32 tree_size,
			  JtNode *root)
{
	uint32		root_entry;
	uint32		root_len;

	memcpy(&root_entry, tree, sizeof(uint32));
	root_len = root_entry & JT_JENTRY_OFFLEN_MASK;
	if (root_len != tree_size - sizeof(uint32))
		jt_nav_corrupt(src, "the root's length does not match the tree size");

	root->offset = sizeof(uint32);
	root->length = root_len;
	root->header = 0;
	switch (root_entry & JT_JENTRY_TYPE_MASK)
	{
		case JT_JENTRY_CONTAINER:
			root->kind = JT_NODE_CONTAINER;
			memcpy(&root->header, tree + sizeof(uint32), sizeof(uint32));
			if (!jt_root_header_ok(root->header) ||
				(root->header & JT_CONTAINER_SCALAR))
				jt_nav_corrupt(src, "the root container has a bad header");
			break;
		case JT_JENTRY_REF:
			root->kind = JT_NODE_REF;
			if (root_len < 2 * sizeof(uint32))
				jt_nav_corrupt(src, "the root reference is shorter than its header");
			memcpy(&root->header, tree + sizeof(uint32), sizeof(uint32));
			if (!jt_root_header_ok(root->header) ||
				(root->header & JT_CONTAINER_SCALAR))
				jt_nav_corrupt(src, "the root reference has a bad header");
			break;
		default:
			jt_nav_corrupt(src, "the root is neither a container nor a reference");
	}
}

/* Check the tree's root and describe it. */
static void
parse_tree(JtSkeleton *skel)
{
	jt_memory_source(&skel->src, skel->tree, skel->hdr.tree_size, true);
	describe_root(&skel->src, skel->tree, skel->hdr.tree_size, &skel->root);
}

/*
 * Do two parts of a unit that follow one another in a reference lie where
 * their indexes say?  A unit's parts lie in it in index order, each where
 * the one before ends; a reference may name them in another order (a
 * partial update writes the parts it replaced in the order it changed
 * them, an UPDATE takes old parts wherever they were) or skip some.  The
 * first starts the unit.  (A unit's parts may also lie in other
 * references.)
 */
static bool
unit_places_ok(const JtPartEntry *a, const JtPartEntry *b)
{
	uint64		a_end = (uint64) jt_entry_unit_raw_offset(a) + a->rawsize - VARHDRSZ;

	Assert(jt_entry_unit_index(a) < jt_entry_unit_index(b));
	return jt_entry_unit_index(a) + 1 == jt_entry_unit_index(b) ?
		jt_entry_unit_raw_offset(b) == a_end :
		jt_entry_unit_raw_offset(b) >= a_end;
}

static bool
unit_follows(const JtSkeleton *skel, const JtPartEntry *ranges, uint32 r,
			 const JtPartEntry *stored)
{
	JtPartEntry prev;

	if (jt_entry_unit_index(stored) == 0)
		return jt_entry_unit_raw_offset(stored) == 0;
	if (r == 0)
		return true;
	prev = jt_stored_range(skel, &ranges[r - 1]);
	if (prev.valueid != stored->valueid ||
		jt_entry_stored_offset(&prev) != jt_entry_stored_offset(stored) ||
		!jt_entry_in_unit(&prev))
		return true;
	if (prev.extinfo != stored->extinfo ||
		jt_entry_unit_count(&prev) != jt_entry_unit_count(stored) ||
		jt_entry_unit_index(&prev) == jt_entry_unit_index(stored))
		return false;
	return jt_entry_unit_index(&prev) < jt_entry_unit_index(stored) ?
		unit_places_ok(&prev, stored) : unit_places_ok(stored, &prev);
}

/*
 * Are the sizes of a part stored on its own (not in a unit) possible, as
 * its entry gives them (raw size with its header, at least a word)?  It
 * stores as many bytes as it holds, or fewer, compressed with a method
 * core knows.
 */
static bool
alone_sizes_ok(const JtPartEntry *stored)
{
	uint32		extsize = jt_entry_extsize(stored);
	uint32		method = stored->extinfo >> VARLENA_EXTSIZE_BITS;

	return extsize <= (uint32) stored->rawsize - VARHDRSZ &&
		(extsize == (uint32) stored->rawsize - VARHDRSZ ||
		 method == TOAST_PGLZ_COMPRESSION_ID ||
		 method == TOAST_LZ4_COMPRESSION_ID);
}

/* Do the stored bytes an entry names lie in its TOAST value? */
static bool
lies_in_its_value(const JtPartEntry *stored)
{
	return stored->value_size <= VARLENA_EXTSIZE_MASK &&
		(uint64) jt_entry_stored_offset(stored) + jt_entry_extsize(stored) <=
		stored->value_size;
}

/*
 * An entry of a tree read in from outside the row that names a part of
 * the value holding the tree (value id 0): give it that value's id and
 * size, in the tree too (at), which attaching owns.
 */
static void
take_own_value(JtSkeleton *skel, char *at, JtPartEntry *entry)
{
	if (entry->value_size != 0)
		jt_nav_corrupt(&skel->src, "a part of the tree's own value gives a size");
	entry->valueid = skel->own_value.valueid;
	entry->value_size = skel->own_value.value_size;
	jt_entry_write(at, skel->version, entry);
}

/* A reference's range count, from its header. */
static uint32
ref_nranges(JtSource *src, const JtNode *node)
{
	JtRefHeader rh;

	if (node->length < sizeof(JtRefHeader))
		jt_nav_corrupt(src, "a reference is shorter than its header");
	memcpy(&rh, jt_source_read(src, node->offset, sizeof(JtRefHeader)),
		   sizeof(JtRefHeader));
	return rh.nranges & ~JT_REF_HAS_LAYOUTS;
}

/*
 * Check a reference found in the tree and describe it.  The ranges are
 * copied to aligned memory.  Their key bytes must lie inside the
 * reference, after the ranges, and for an object split into several parts
 * the first keys of the parts after the first must be in increasing order.
 */
void
jt_skeleton_read_ref(JtSkeleton *skel, const JtNode *node, JtRef *ref)
{
	JtSource   *src = &skel->src;
	const char *p;
	JtRefHeader rh;
	JtPartEntry *ranges;
	uint32		nranges;
	bool		has_layouts;
	uint64		dirsize;
	uint64		keys_end;
	uint64		count = 0;
	uint32		nranges_checked;

	Assert(node->kind == JT_NODE_REF);
	if (node->length < sizeof(JtRefHeader))
		jt_nav_corrupt(src, "a reference is shorter than its header");
	p = jt_source_read(src, node->offset, node->length);
	memcpy(&rh, p, sizeof(JtRefHeader));
	if (!jt_root_header_ok(rh.header))
		jt_nav_corrupt(src, "a reference has a bad container header");
	has_layouts = (rh.nranges & JT_REF_HAS_LAYOUTS) != 0;
	nranges = rh.nranges & ~JT_REF_HAS_LAYOUTS;
	if (has_layouts && skel->version < JT_SKELETON_VERSION_LAYOUTS)
		jt_nav_corrupt(src, "a reference has layout bytes in a format that has none");
	dirsize = jt_entry_offset(0, nranges, skel->version);
	keys_end = node->length - (has_layouts ? nranges : 0);
	if (nranges == 0 || dirsize > keys_end || keys_end > node->length)
		jt_nav_corrupt(src, "a reference's ranges do not fit in it");
	if ((rh.header & JT_CONTAINER_SCALAR) && nranges != 1)
		jt_nav_corrupt(src, "a long scalar is split into several parts");

	nranges_checked = nranges;
	ranges = palloc(nranges * sizeof(JtPartEntry));
	for (uint32 i = 0; i < nranges; i++)
	{
		jt_entry_read(p + jt_entry_offset(0, i, skel->version),
					  skel->version, &ranges[i]);
		if (OidIsValid(skel->own_value.valueid) &&
			!OidIsValid(ranges[i].valueid))
			take_own_value(skel, (char *) p + jt_entry_offset(0, i, skel->version),
						   &ranges[i]);
	}

	/*
	 * While a tree read in gets its value's id (jt_skeleton_attach_tree()),
	 * the entries of a tree the row keeps edits of are not checked: the
	 * tree part is then an earlier version's, whose entries the row's edits
	 * and deltas bring up to date afterwards, and are checked with them.
	 */
	if (OidIsValid(skel->own_value.valueid) && skel->tree_edits_len > 0)
		nranges_checked = 0;
	for (uint32 r = 0; r < nranges_checked; r++)
	{
		JtPartEntry *range = &ranges[r];
		JtPartEntry stored = jt_stored_range(skel, range);
		uint32		extsize = stored.extinfo & VARLENA_EXTSIZE_MASK;
		uint32		method = stored.extinfo >> VARLENA_EXTSIZE_BITS;

		/* the sizes of what is stored, the base of a delta */
		if (range->rawsize < (int32) (VARHDRSZ + sizeof(uint32)) ||
			stored.rawsize < (int32) (VARHDRSZ + sizeof(uint32)))
			jt_nav_corrupt(src, "a part has impossible sizes");
		if (!jt_entry_in_unit(&stored))
		{
			if (!alone_sizes_ok(&stored))
				jt_nav_corrupt(src, "a part has impossible sizes");
		}
		else if (!jt_version_has_units(skel->version) ||
				 (method != TOAST_PGLZ_COMPRESSION_ID &&
				  method != TOAST_LZ4_COMPRESSION_ID) ||
				 jt_entry_unit_index(&stored) >= jt_entry_unit_count(&stored) ||
				 jt_entry_unit_count(&stored) > extsize ||
				 jt_entry_unit_index(&stored) > stored.offset ||
				 (uint64) jt_entry_unit_raw_offset(&stored) +
				 stored.rawsize - VARHDRSZ > JT_UNIT_MAX_RAW)
			jt_nav_corrupt(src, "a part's compression unit is impossible");
		if (!lies_in_its_value(&stored))
			jt_nav_corrupt(src, "a part lies outside its TOAST value");
		if (jt_entry_in_unit(&stored) && !unit_follows(skel, ranges, r, &stored))
			jt_nav_corrupt(src, "the parts of a compression unit do not follow one another");
		if (!jt_root_header_ok(range->header) || !jt_root_header_ok(stored.header) ||
			(range->header & ~JT_CONTAINER_COUNT_MASK) !=
			(rh.header & ~JT_CONTAINER_COUNT_MASK) ||
			(stored.header & ~JT_CONTAINER_COUNT_MASK) !=
			(rh.header & ~JT_CONTAINER_COUNT_MASK))
			jt_nav_corrupt(src, "a part's type differs from its reference's");
		if (nranges > 1 && (range->header & JT_CONTAINER_COUNT_MASK) == 0)
			jt_nav_corrupt(src, "a split container has an empty part");
		count += range->header & JT_CONTAINER_COUNT_MASK;
		if ((uint64) range->key_offset + range->key_length > keys_end ||
			(range->key_length > 0 && range->key_offset < dirsize))
			jt_nav_corrupt(src, "a part's first key lies outside its reference");
		if (r > 1 && (rh.header & JT_CONTAINER_OBJECT) &&
			jt_key_cmp(p + ranges[r - 1].key_offset, ranges[r - 1].key_length,
					   p + range->key_offset, range->key_length) >= 0)
			jt_nav_corrupt(src, "the first keys of an object's parts are out of order");
		if (has_layouts)
		{
			uint8		layout = (uint8) p[keys_end + r];

			if ((layout & JT_LAYOUT_UNUSED_MASK) ||
				(!(rh.header & JT_CONTAINER_OBJECT) &&
				 (layout & JT_LAYOUT_KEYS_MASK)) ||
				(!(layout & JT_LAYOUT_ALIGNED) &&
				 (layout & JT_LAYOUT_LEAD_MASK)))
				jt_nav_corrupt(src, "a part's layout byte is invalid");
		}
	}
	if (nranges_checked > 0 && count != (rh.header & JT_CONTAINER_COUNT_MASK))
		jt_nav_corrupt(src, "a reference's parts do not add up to its count");

	ref->header = rh.header;
	ref->nranges = nranges;
	ref->ranges = ranges;
	ref->refdata = p;
	ref->reflen = node->length;
	ref->layouts = has_layouts ? (const uint8 *) p + keys_end : NULL;
}

/* The part of an object reference that would hold key. */
uint32
jt_ref_range_for_key(const JtRef *ref, const char *key, uint32 keylen)
{
	uint32		lo = 1;
	uint32		hi = ref->nranges;

	/* the last part whose first key is not after the key sought */
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;
		const JtPartEntry *r = &ref->ranges[mid];

		if (jt_key_cmp(ref->refdata + r->key_offset, r->key_length,
					   key, keylen) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo - 1;
}

/*
 * The size of node, a value of skel's tree, flattened (any padding before
 * it excluded), and whether it starts 4-byte aligned there: false if a
 * reference in it cannot tell (no layout bytes).  A container flattened is
 * its header, its JEntries, then each entry's bytes, a numeric or a
 * container starting at a multiple of 4 from the container's start, which
 * is itself 4-byte aligned in the document: so its size does not depend on
 * where it lies.
 */
static bool
flat_node_size(JtSkeleton *skel, const JtNode *node, uint64 *size,
			   bool *aligned)
{
	JtEntryIter it;
	JtNode		entry;
	uint64		total;

	check_stack_depth();
	if (node->kind == JT_NODE_REF)
	{
		JtRef		ref;

		jt_skeleton_read_ref(skel, node, &ref);
		if (!jt_ref_flat_size(&ref, size))
			return false;
		/* a long scalar's layout byte tells a numeric from a string */
		*aligned = !(ref.header & JT_CONTAINER_SCALAR) ||
			(ref.layouts[0] & JT_LAYOUT_ALIGNED) != 0;
		return true;
	}
	*aligned = node->kind == JT_NODE_NUMERIC ||
		node->kind == JT_NODE_CONTAINER;
	if (node->kind != JT_NODE_CONTAINER)
	{
		*size = node->length;
		return true;
	}
	jt_nav_iter_begin(&skel->src, node, &it);
	total = sizeof(uint32) + (uint64) it.nentries * sizeof(uint32);
	while (jt_nav_iter_next(&skel->src, &it, &entry))
	{
		uint64		entry_size;
		bool		entry_aligned;

		if (!flat_node_size(skel, &entry, &entry_size, &entry_aligned))
			return false;
		if (entry_aligned)
			total = TYPEALIGN(4, total);
		total += entry_size;
	}
	*size = total;
	return true;
}

/*
 * The size of the document skel stands for, flattened (without a varlena
 * header), from its tree and its references' directories alone: false if
 * a reference cannot tell (see jt_ref_flat_size()).
 */
bool
jt_skeleton_flat_size(JtSkeleton *skel, uint64 *size)
{
	bool		aligned;

	return flat_node_size(skel, &skel->root, size, &aligned);
}

/*
 * The size of the value a reference stands for, flattened (without a
 * varlena header), from its directory alone: false if it has no layout
 * bytes (format versions 1 and 2).
 *
 * A long scalar's part is a raw scalar: a varlena header, the root's
 * header and one JEntry, then the value, at offset 8 (so a numeric needs
 * no padding there).  Flattened, only the value remains.
 *
 * Part q alone is a varlena header, the root's header, 4 bytes of JEntry
 * for each entry, its key bytes K and the values, which start at K modulo
 * 4.  Flattened, its JEntries and keys join the container's, and its
 * values start where the previous part's end: all that changes is the
 * padding before its first aligned value, which the layout byte tells.
 */
bool
jt_ref_flat_size(const JtRef *ref, uint64 *size)
{
	uint32		phase = 0;
	uint64		total = sizeof(uint32); /* the container's header */

	if (ref->layouts == NULL)
		return false;
	if (ref->header & JT_CONTAINER_SCALAR)
	{
		if (ref->nranges != 1 ||
			ref->ranges[0].rawsize < VARHDRSZ + 2 * sizeof(uint32))
			return false;
		*size = (uint64) ref->ranges[0].rawsize - VARHDRSZ - 2 * sizeof(uint32);
		return true;
	}
	/* the values start after all the keys */
	for (uint32 q = 0; q < ref->nranges; q++)
		phase += ref->layouts[q] & JT_LAYOUT_KEYS_MASK;
	phase %= 4;

	for (uint32 q = 0; q < ref->nranges; q++)
	{
		uint8		layout = ref->layouts[q];
		uint32		alone = layout & JT_LAYOUT_KEYS_MASK;
		int64		moved = 0;

		if (layout & JT_LAYOUT_ALIGNED)
		{
			uint32		lead = (layout & JT_LAYOUT_LEAD_MASK) >>
				JT_LAYOUT_LEAD_SHIFT;

			/* the values' span from phase, less that from where alone */
			moved = ((int64) TYPEALIGN(4, phase + lead) - phase) -
				((int64) TYPEALIGN(4, alone + lead) - alone);
		}
		total += (uint64) ((int64) ref->ranges[q].rawsize - VARHDRSZ -
						   sizeof(uint32) + moved);
		/* the values' span, modulo 4, moves the next part's start */
		phase = (uint32) ((phase + (uint32) ref->ranges[q].rawsize - alone +
						   (uint32) (moved & 3)) % 4);
	}
	*size = total;
	return true;
}

/*
 * Visit the references of a container of the tree, in document order.
 * path holds the keys and indexes leading to the container (palloc'd
 * strings), extended while its entries are visited.
 */
static void
walk_container(JtSkeleton *skel, const JtNode *node, List *path,
			   JtRefVisitor visit, void *arg)
{
	JtEntryIter it;
	JtNode		child;
	uint32		count = jt_node_count(node);
	bool		object = jt_node_is_object(node);

	check_stack_depth();
	jt_nav_iter_begin(&skel->src, node, &it);
	while (jt_nav_iter_next(&skel->src, &it, &child))
	{
		uint32		i = it.next - 1;
		char	   *step;

		if ((child.kind != JT_NODE_CONTAINER && child.kind != JT_NODE_REF) ||
			(object && i < count))
			continue;
		if (object)
		{
			JtNode		key;

			jt_nav_entry(&skel->src, node, i - count, &key);
			step = pnstrdup(jt_source_read(&skel->src, key.offset, key.length),
							key.length);
		}
		else
			step = psprintf("%u", i);
		path = lappend(path, step);
		if (child.kind == JT_NODE_CONTAINER)
			walk_container(skel, &child, path, visit, arg);
		else
		{
			JtRef		ref;

			jt_skeleton_read_ref(skel, &child, &ref);
			visit(arg, &ref, path);
		}
		path = list_delete_last(path);
		pfree(step);
	}
}

/*
 * Call visit for every reference of a skeleton, in document order (the
 * order in which jt_skeleton_flatten() fetches their parts), with the path
 * of the value it stands for.  Only the pointer is read.
 */
void
jt_skeleton_walk(JtSkeleton *skel, JtRefVisitor visit, void *arg)
{
	jt_skeleton_walk_below(skel, &skel->root, visit, arg);
}

/*
 * The same, for the references at or below node, a value of skel's tree,
 * with paths from it.
 */
void
jt_skeleton_walk_below(JtSkeleton *skel, const JtNode *node,
					   JtRefVisitor visit, void *arg)
{
	if (node->kind == JT_NODE_REF)
	{
		JtRef		ref;

		jt_skeleton_read_ref(skel, node, &ref);
		visit(arg, &ref, NIL);
	}
	else if (node->kind == JT_NODE_CONTAINER)
		walk_container(skel, node, NIL, visit, arg);
}

/*
 * Count the references of more than max_ranges ranges among the values of
 * container node (a container of the tree in src), at any depth, adding
 * the bytes they take to *bytes.
 */
static uint32
directories_over_below(JtSource *src, const JtNode *node, uint32 max_ranges,
					   uint64 *bytes)
{
	JtEntryIter it;
	JtNode		child;
	uint32		n = 0;

	check_stack_depth();
	jt_nav_iter_begin(src, node, &it);
	jt_nav_iter_seek(src, &it, jt_node_first_value_index(node));
	while (jt_nav_iter_next(src, &it, &child))
	{
		if (child.kind == JT_NODE_REF && ref_nranges(src, &child) > max_ranges)
		{
			*bytes += child.length;
			n++;
		}
		else if (child.kind == JT_NODE_CONTAINER)
			n += directories_over_below(src, &child, max_ranges, bytes);
	}
	return n;
}

/*
 * The references of a tree (tree_size bytes, as built or as a parsed
 * skeleton holds it) of more than max_ranges ranges: their number, and in
 * *bytes the bytes they take in the tree.  Directories that wide decide
 * that the tree leaves the row (JT_ROW_MAX_RANGES).
 */
uint32
jt_tree_directories_over(const char *tree, uint32 tree_size,
						 uint32 max_ranges, uint64 *bytes)
{
	JtSource	src;
	JtNode		root;

	*bytes = 0;
	if (tree_size < 2 * sizeof(uint32))
		return 0;
	jt_memory_source(&src, tree, tree_size, true);
	describe_root(&src, tree, tree_size, &root);
	if (root.kind == JT_NODE_REF)
	{
		if (ref_nranges(&src, &root) <= max_ranges)
			return 0;
		*bytes = root.length;
		return 1;
	}
	return directories_over_below(&src, &root, max_ranges, bytes);
}

static void
collect_ranges(void *arg, const JtRef *ref, List *path)
{
	List	  **list = (List **) arg;

	for (uint32 r = 0; r < ref->nranges; r++)
		*list = lappend(*list, (void *) &ref->ranges[r]);
}

/*
 * The parts of a skeleton as stored, in document order: their number, and
 * a palloc'd array of their ranges (for a part kept as a delta, its
 * base's).  A stored pointer whose tree lies outside the row lists the
 * part holding the tree last: it owns that part as it owns the others.
 */
uint32
jt_skeleton_list_parts(JtSkeleton *skel, JtPartEntry **ranges)
{
	List	   *list = NIL;
	uint32		n;
	uint32		deltas_used = 0;
	ListCell   *lc;

	jt_skeleton_walk(skel, collect_ranges, &list);
	n = list_length(list);
	if (n != skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "the tree's parts differ from its header's count");
	*ranges = palloc((n + 1) * sizeof(JtPartEntry));
	n = 0;
	foreach(lc, list)
	{
		const JtPartEntry *range = lfirst(lc);

		if (jt_delta_for(skel, range) != NULL)
			deltas_used++;
		(*ranges)[n++] = jt_stored_range(skel, range);
	}
	list_free(list);
	if (deltas_used != skel->ndeltas)
		jt_nav_corrupt(&skel->src, "a delta names a value that is not one of the skeleton's parts");
	if (skel->has_tree_entry)
		(*ranges)[n++] = skel->tree_entry;
	return n;
}

/* Order directory entries by the TOAST value their parts lie in. */
int
jt_entry_value_cmp(const void *a, const void *b)
{
	Oid			x = ((const JtPartEntry *) a)->valueid;
	Oid			y = ((const JtPartEntry *) b)->valueid;

	return (x > y) - (x < y);
}

/* Order directory entries by where their parts are stored. */
int
jt_entry_location_cmp(const void *a, const void *b)
{
	const JtPartEntry *x = (const JtPartEntry *) a;
	const JtPartEntry *y = (const JtPartEntry *) b;

	if (x->valueid != y->valueid)
		return x->valueid < y->valueid ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * The TOAST values a pointer's parts lie in, each once (the entry of its
 * first part), sorted by value id; their number.  ranges is sorted.  The
 * parts of an inline skeleton lie in none.
 */
uint32
jt_distinct_values(JtPartEntry *ranges, uint32 n)
{
	uint32		nvalues = 0;

	qsort(ranges, n, sizeof(JtPartEntry), jt_entry_location_cmp);
	for (uint32 i = 0; i < n; i++)
	{
		if (!OidIsValid(ranges[i].valueid))
			continue;
		if (nvalues > 0 && ranges[nvalues - 1].valueid == ranges[i].valueid)
		{
			if (ranges[nvalues - 1].value_size != ranges[i].value_size)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("corrupt jsonb_toaster value"),
						 errdetail("Its parts give toast value %u two sizes.",
								   ranges[i].valueid)));
			continue;
		}
		ranges[nvalues++] = ranges[i];
	}
	return nvalues;
}

/*
 * The raw content of a part of an inline skeleton (its len bytes), where
 * the skeleton holds it: valid until jt_skeleton_release().  The parts'
 * datum is decompressed once per parsed skeleton.
 */
const char *
jt_skeleton_inline_part_bytes(const JtSkeleton *skel,
							  const JtPartEntry *range, uint32 *len)
{
	Assert(skel->hdr.inline_parts);
	if (skel->inline_raw == NULL)
	{
		struct varlena *stored = inline_datum_copy(skel);
		struct varlena *decompressed;

		decompressed = detoast_attr(stored);
		if (decompressed != stored)
			pfree(stored);
		/* a cache of what the skeleton holds, not a change of it */
		((JtSkeleton *) skel)->inline_raw = decompressed;
	}
	*len = jt_entry_extsize(range);
	if (range->valueid != InvalidOid || jt_entry_in_unit(range) ||
		(int64) *len != (int64) range->rawsize - VARHDRSZ ||
		VARSIZE_ANY_EXHDR(skel->inline_raw) < skel->inline_parts_at ||
		range->value_size != VARSIZE_ANY_EXHDR(skel->inline_raw) -
		skel->inline_parts_at ||
		(uint64) range->offset + *len > range->value_size)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("A part kept in the pointer lies outside its parts.")));
	return VARDATA_ANY(skel->inline_raw) + skel->inline_parts_at +
		range->offset;
}

/* The same, as a palloc'd jsonb datum. */
struct varlena *
jt_skeleton_inline_part(const JtSkeleton *skel, const JtPartEntry *range)
{
	uint32		len;
	const char *data = jt_skeleton_inline_part_bytes(skel, range, &len);
	struct varlena *raw = palloc(len + VARHDRSZ);

	SET_VARSIZE(raw, len + VARHDRSZ);
	memcpy(VARDATA(raw), data, len);
	return raw;
}

/*
 * Free what parsing and reading skel allocated of its own: a folded tree
 * and an inline skeleton's decompressed parts.  skel is not to be read
 * afterwards.  For callers that may run in a long-lived memory context
 * (core's detoasting, from a sort's comparisons for instance).
 */
void
jt_skeleton_release(JtSkeleton *skel)
{
	if (skel->inline_raw != NULL)
		pfree(skel->inline_raw);
	skel->inline_raw = NULL;
	if (skel->hdr.tree_folded && skel->tree != NULL)
		pfree((char *) skel->tree);
	skel->tree = NULL;
}
