/*-------------------------------------------------------------------------
 *
 * skeleton.c
 *	  Reading the jsonb toaster's skeletons: checking them, listing their
 *	  parts and flattening them back into the original jsonb value.
 *
 * See skeleton.h for the format.  The tree of a skeleton is read with the
 * navigator, which checks every JEntry against the bounds of its
 * container; references and parts are checked here.  A part read whole is
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

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "access/heaptoast.h"
#include "access/toast_compression.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "port/pg_crc32c.h"
#include "utils/memutils.h"

#include "support/compat.h"
#include "format/delta.h"
#include "jsonb/jsonb_writer.h"
#include "format/skeleton.h"

static void
skeleton_corrupt(JtSource *src, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt jsonb_toaster value"),
			 errdetail("%s.", detail)));
}

static void
skeleton_fill(JtSource *src, uint32 upto)
{
	/* everything is in memory: jt_source_read() checked the bounds */
	elog(ERROR, "skeleton source asked for bytes it does not have");
}

/* A byte source over bytes in memory. */
void
jt_memory_source(JtSource *src, const char *data, uint32 len, bool refs_allowed)
{
	src->data = data;
	src->size = len;
	src->avail = len;
	src->fill = skeleton_fill;
	src->corrupt = skeleton_corrupt;
	src->refs_allowed = refs_allowed;
}

/* Is this a valid header for the root of a document or of a part? */
static bool
root_header_ok(uint32 header)
{
	uint32		kind = header & (JT_CONTAINER_OBJECT | JT_CONTAINER_ARRAY);

	if (kind != JT_CONTAINER_OBJECT && kind != JT_CONTAINER_ARRAY)
		return false;
	if (header & JT_CONTAINER_SCALAR)
		return kind == JT_CONTAINER_ARRAY &&
			(header & JT_CONTAINER_COUNT_MASK) == 1;
	return true;
}

/*
 * The content hash of a part's raw data (without its varlena header), as
 * format version version takes it.  CRC-32C, which the CPU computes, costs
 * a fraction of hash_bytes(); either is only a hint, confirmed by comparing
 * bytes before a part is shared, and a check of a rebuilt delta.
 */
uint32
jt_part_hash(uint32 version, const char *data, uint32 len)
{
	pg_crc32c	crc;

	if (version < JT_SKELETON_VERSION_CRC32C)
		return hash_bytes((const unsigned char *) data, (int) len);
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

/*
 * Check a skeleton's payload, of format version version, and describe it.
 * The tree is read where it lies, so the payload must outlive skel.  The
 * tree's first word is the root's JEntry; the root follows it.
 */
void
jt_skeleton_parse(JtSkeleton *skel, const char *payload, uint32 payload_len,
				  uint32 version)
{
	uint32		root_entry;
	uint32		root_len;

	jt_memory_source(&skel->src, NULL, 0, true);
	skel->version = version;
	if (payload_len < sizeof(JtSkeletonHeader))
		jt_nav_corrupt(&skel->src, "the pointer is shorter than its header");
	memcpy(&skel->hdr, payload, sizeof(JtSkeletonHeader));
	if (skel->hdr.tree_size > payload_len - sizeof(JtSkeletonHeader))
		jt_nav_corrupt(&skel->src, "the tree size does not match the pointer size");
	if (skel->hdr.tree_size < 2 * sizeof(uint32))
		jt_nav_corrupt(&skel->src, "the tree is too short");
	/* what follows the tree is the delta area (format version 2) */
	jt_delta_parse_area(skel, payload + sizeof(JtSkeletonHeader) + skel->hdr.tree_size,
						payload_len - sizeof(JtSkeletonHeader) - skel->hdr.tree_size);

	/* read in place: the navigator reads fields with memcpy */
	skel->tree = payload + sizeof(JtSkeletonHeader);
	jt_memory_source(&skel->src, skel->tree, skel->hdr.tree_size, true);

	memcpy(&root_entry, skel->tree, sizeof(uint32));
	root_len = root_entry & JT_JENTRY_OFFLEN_MASK;
	if (root_len != skel->hdr.tree_size - sizeof(uint32))
		jt_nav_corrupt(&skel->src, "the root's length does not match the tree size");

	skel->root.offset = sizeof(uint32);
	skel->root.length = root_len;
	skel->root.header = 0;
	switch (root_entry & JT_JENTRY_TYPE_MASK)
	{
		case JT_JENTRY_CONTAINER:
			skel->root.kind = JT_NODE_CONTAINER;
			memcpy(&skel->root.header, skel->tree + sizeof(uint32), sizeof(uint32));
			if (!root_header_ok(skel->root.header) ||
				(skel->root.header & JT_CONTAINER_SCALAR))
				jt_nav_corrupt(&skel->src, "the root container has a bad header");
			break;
		case JT_JENTRY_REF:
			skel->root.kind = JT_NODE_REF;
			if (root_len < 2 * sizeof(uint32))
				jt_nav_corrupt(&skel->src, "the root reference is shorter than its header");
			memcpy(&skel->root.header, skel->tree + sizeof(uint32), sizeof(uint32));
			if (!root_header_ok(skel->root.header) ||
				(skel->root.header & JT_CONTAINER_SCALAR))
				jt_nav_corrupt(&skel->src, "the root reference has a bad header");
			break;
		default:
			jt_nav_corrupt(&skel->src, "the root is neither a container nor a reference");
	}
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
	JtRefRange *ranges;
	uint32		nranges;
	bool		has_layouts;
	uint64		dirsize;
	uint64		keys_end;
	uint64		count = 0;

	Assert(node->kind == JT_NODE_REF);
	if (node->length < sizeof(JtRefHeader))
		jt_nav_corrupt(src, "a reference is shorter than its header");
	p = jt_source_read(src, node->offset, node->length);
	memcpy(&rh, p, sizeof(JtRefHeader));
	if (!root_header_ok(rh.header))
		jt_nav_corrupt(src, "a reference has a bad container header");
	has_layouts = (rh.nranges & JT_REF_HAS_LAYOUTS) != 0;
	nranges = rh.nranges & ~JT_REF_HAS_LAYOUTS;
	if (has_layouts && skel->version < JT_SKELETON_VERSION_LAYOUTS)
		jt_nav_corrupt(src, "a reference has layout bytes in a format that has none");
	dirsize = sizeof(JtRefHeader) + (uint64) nranges * sizeof(JtRefRange);
	keys_end = node->length - (has_layouts ? nranges : 0);
	if (nranges == 0 || dirsize > keys_end || keys_end > node->length)
		jt_nav_corrupt(src, "a reference's ranges do not fit in it");
	if ((rh.header & JT_CONTAINER_SCALAR) && nranges != 1)
		jt_nav_corrupt(src, "a long scalar is split into several parts");

	ranges = palloc(nranges * sizeof(JtRefRange));
	memcpy(ranges, p + sizeof(JtRefHeader), nranges * sizeof(JtRefRange));
	for (uint32 r = 0; r < nranges; r++)
	{
		JtRefRange *range = &ranges[r];
		JtRefRange	stored = jt_stored_range(skel, range);
		uint32		extsize = stored.extinfo & VARLENA_EXTSIZE_MASK;
		uint32		method = stored.extinfo >> VARLENA_EXTSIZE_BITS;

		/* the sizes of what is stored, the base of a delta */
		if (range->rawsize < (int32) (VARHDRSZ + sizeof(uint32)) ||
			stored.rawsize < (int32) (VARHDRSZ + sizeof(uint32)) ||
			extsize > (uint32) stored.rawsize - VARHDRSZ ||
			(extsize < (uint32) stored.rawsize - VARHDRSZ &&
			 method != TOAST_PGLZ_COMPRESSION_ID &&
			 method != TOAST_LZ4_COMPRESSION_ID))
			jt_nav_corrupt(src, "a part has impossible sizes");
		if (!root_header_ok(range->header) || !root_header_ok(stored.header) ||
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
	if (count != (rh.header & JT_CONTAINER_COUNT_MASK))
		jt_nav_corrupt(src, "a reference's parts do not add up to its count");

	ref->header = rh.header;
	ref->nranges = nranges;
	ref->ranges = ranges;
	ref->refdata = p;
	ref->reflen = node->length;
	ref->layouts = has_layouts ? (const uint8 *) p + keys_end : NULL;
}

/*
 * The layout byte of a part whose root (in src) is an object or an array
 * (skeleton.h).  The keys take the bytes up to where the first value
 * starts; the values are walked up to the first aligned one only.
 */
uint8
jt_part_layout(JtSource *src, const JtNode *root)
{
	JtEntryIter it;
	JtNode		entry;
	uint64		key_bytes;
	uint64		lead = 0;

	jt_nav_iter_begin(src, root, &it);
	if (jt_node_is_object(root))
		jt_nav_iter_seek(src, &it, jt_node_count(root));
	key_bytes = it.start;
	while (jt_nav_iter_next(src, &it, &entry))
	{
		if (entry.kind == JT_NODE_NUMERIC || entry.kind == JT_NODE_CONTAINER)
			return jt_layout_byte(key_bytes, true, lead);
		lead += entry.length;
	}
	return jt_layout_byte(key_bytes, false, 0);
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
	uint64		total = sizeof(uint32);	/* the container's header */

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
 * Check the raw content of a part (a jsonb datum with a 4-byte header)
 * against its directory entry and its layout byte (-1 for none), and
 * describe its root.  The content hash is not recomputed: reads check
 * structure (the navigator bounds-checks every access), and hashing every
 * byte fetched would cost a quarter of a wide read; the hash serves
 * sharing (src/sharing.c), which compares bytes.
 */
void
jt_part_check(JtSource *partsrc, const JtRefRange *range, int layout,
			  const struct varlena *raw, JtNode *root)
{
	uint32		len;

	jt_memory_source(partsrc, NULL, 0, false);
	if (VARATT_IS_EXTENDED(raw) || VARSIZE(raw) != (uint32) range->rawsize)
		jt_nav_corrupt(partsrc, "a part's size differs from its reference's");
	len = VARSIZE(raw) - VARHDRSZ;
	jt_memory_source(partsrc, VARDATA(raw), len, false);
	jt_nav_root(partsrc, root);
	if (root->header != range->header)
		jt_nav_corrupt(partsrc, "a part's root differs from its reference's");
	if (!jt_nav_entries_fill(partsrc, root))
		jt_nav_corrupt(partsrc, "a part's entries do not end where its data ends");
	/* a wrong byte would give a one-part update a wrong size: report it now */
	if (layout >= 0 && (uint8) layout != jt_part_layout(partsrc, root))
		jt_nav_corrupt(partsrc, "a part's layout byte differs from its content's");
}

/* State of one flattening. */
typedef struct Flattener
{
	JtSkeleton *skel;
	StringInfoData buf;
	const JtPartFetcher *fetcher;
	uint32		partno;			/* parts fetched so far */
} Flattener;

/*
 * The parts of one reference, fetched.  A part is checked when it is
 * decompressed, or at once if it came uncompressed.  The parts of a
 * container written in one go (write_ref_value()) may stay compressed
 * until their turn comes: each is then decompressed into a buffer that
 * the next reuses, or straight into the result, so that a wide container
 * is not held twice in memory, and bytes are copied while they are still
 * in the CPU's caches.
 */
typedef struct LoadedRef
{
	JtRef		ref;
	Oid			toastrelid;
	const JtPartFetcher *fetcher;
	JtSource   *srcs;
	JtNode	   *roots;
	struct varlena **raws;
	bool	   *free_raws;
	JtNode		scalar;			/* long scalars: the value */
} LoadedRef;

static void flatten_container(Flattener *f, JtSource *src, const JtNode *node);

/* Did the fetcher give a part in its compressed form? */
static inline bool
fetched_compressed(const JtPartFetcher *fetcher, const struct varlena *part)
{
	if (!VARATT_IS_COMPRESSED(part))
		return false;
	if (fetcher->decompress == NULL)
		elog(ERROR, "a part fetcher that decompresses nothing gave a compressed part");
	return true;
}

static inline bool
part_is_compressed(LoadedRef *lr, uint32 r)
{
	return fetched_compressed(lr->fetcher, lr->raws[r]);
}

/* Check part r (decompressed already) and describe its root. */
static void
check_part(LoadedRef *lr, uint32 r)
{
	jt_part_check(&lr->srcs[r], &lr->ref.ranges[r],
				  lr->ref.layouts ? lr->ref.layouts[r] : -1, lr->raws[r],
				  &lr->roots[r]);
}

/*
 * Decompress part r into raw (room for its raw size; NULL for a new
 * buffer), and check it.  The stored form is freed, or kept for the
 * caller when raw was given: the caller's buffer is then the part's until
 * the next decompression into it.
 */
static void
decompress_part(LoadedRef *lr, uint32 r, struct varlena *raw)
{
	struct varlena *stored = lr->raws[r];

	Assert(part_is_compressed(lr, r));
	if (raw == NULL)
	{
		raw = palloc(lr->ref.ranges[r].rawsize);
		lr->fetcher->decompress(stored, &lr->ref.ranges[r], lr->toastrelid,
								raw);
		if (lr->free_raws[r])
			pfree(stored);
		lr->raws[r] = raw;
		lr->free_raws[r] = true;
		check_part(lr, r);
		return;
	}
	lr->fetcher->decompress(stored, &lr->ref.ranges[r], lr->toastrelid, raw);
	lr->raws[r] = raw;
	check_part(lr, r);
	lr->raws[r] = stored;
}

/*
 * Does write_ref_value() use the parts of a reference one after another?
 * Not a long scalar's (its value is read from the part), nor the parts of
 * an object (its keys come from every part before its values).
 */
static inline bool
parts_used_in_order(const JtRef *ref)
{
	if (ref->header & JT_CONTAINER_SCALAR)
		return false;
	return (ref->header & JT_CONTAINER_OBJECT) == 0 || ref->nranges == 1;
}

/*
 * Fetch the parts of a reference of a skeleton holding deltas: what is
 * stored is asked for, and the content of a part kept as a delta is then
 * rebuilt from its base (so it is never left compressed).
 */
static void
fetch_with_deltas(Flattener *f, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	JtRefRange *stored = palloc(ref->nranges * sizeof(JtRefRange));

	for (uint32 r = 0; r < ref->nranges; r++)
		stored[r] = jt_stored_range(f->skel, &ref->ranges[r]);
	f->fetcher->fetch(f->fetcher->arg, f->partno, ref->nranges, stored,
					  lr->toastrelid, lr->raws, lr->free_raws);
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		const JtDelta *d = jt_delta_for(f->skel, ref->ranges[r].valueid);
		struct varlena *base = lr->raws[r];
		struct varlena *content;

		if (d == NULL)
			continue;
		if (fetched_compressed(lr->fetcher, base))
		{
			struct varlena *raw = palloc(stored[r].rawsize);

			lr->fetcher->decompress(base, &stored[r], lr->toastrelid, raw);
			if (lr->free_raws[r])
				pfree(base);
			base = raw;
			lr->free_raws[r] = true;
		}
		content = jt_delta_apply(d, &ref->ranges[r], base, f->skel->version);
		if (lr->free_raws[r])
			pfree(base);
		lr->raws[r] = content;
		lr->free_raws[r] = true;
	}
	pfree(stored);
}

static void
load_ref(Flattener *f, const JtNode *node, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	bool		in_order;

	jt_skeleton_read_ref(f->skel, node, ref);
	lr->toastrelid = f->skel->hdr.toastrelid;
	lr->fetcher = f->fetcher;
	lr->srcs = palloc(ref->nranges * sizeof(JtSource));
	lr->roots = palloc(ref->nranges * sizeof(JtNode));
	lr->raws = palloc(ref->nranges * sizeof(struct varlena *));
	lr->free_raws = palloc(ref->nranges * sizeof(bool));
	if ((uint64) f->partno + ref->nranges > f->skel->hdr.nparts)
		jt_nav_corrupt(&f->skel->src, "the tree refers to more parts than its header counts");
	if (f->skel->ndeltas == 0)
		f->fetcher->fetch(f->fetcher->arg, f->partno, ref->nranges,
						  ref->ranges, lr->toastrelid, lr->raws,
						  lr->free_raws);
	else
		fetch_with_deltas(f, lr);
	f->partno += ref->nranges;
	in_order = parts_used_in_order(ref);
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		if (!part_is_compressed(lr, r))
			check_part(lr, r);
		else if (!in_order)
			decompress_part(lr, r, NULL);
	}
	if (ref->header & JT_CONTAINER_SCALAR)
	{
		jt_nav_entry(&lr->srcs[0], &lr->roots[0], 0, &lr->scalar);
		if (lr->scalar.kind == JT_NODE_CONTAINER)
			jt_nav_corrupt(&lr->srcs[0], "a long scalar's part holds a container");
	}
}

static void
free_ref(LoadedRef *lr)
{
	for (uint32 r = 0; r < lr->ref.nranges; r++)
		if (lr->free_raws[r])
			pfree(lr->raws[r]);
	pfree(lr->free_raws);
	pfree(lr->raws);
	pfree(lr->roots);
	pfree(lr->srcs);
	pfree((void *) lr->ref.ranges);
}

/* The JEntry type of the value a loaded reference stands for. */
static uint32
loaded_ref_type(LoadedRef *lr)
{
	if (lr->ref.header & JT_CONTAINER_SCALAR)
		return jt_node_entry_type(&lr->scalar);
	return JT_JENTRY_CONTAINER;
}

/*
 * The end offset of entry i of a part's root container, whose previous
 * entry ends at start, checked against the data area; *type gets the
 * entry's type, checked too, unless type is NULL.
 */
static inline uint32
next_entry_end(JtSource *src, const char *jentries, uint32 i, uint32 start,
			   uint32 datalen, uint32 *type)
{
	uint32		e;
	uint32		end;

	memcpy(&e, jentries + (uint64) i * sizeof(uint32), sizeof(uint32));
	end = (e & JT_JENTRY_HAS_OFF) ? (e & JT_JENTRY_OFFLEN_MASK) :
		start + (e & JT_JENTRY_OFFLEN_MASK);
	if (unlikely(end < start || end > datalen))
		jt_nav_corrupt(src, "an entry of a part lies outside its data");
	if (type)
	{
		*type = e & JT_JENTRY_TYPE_MASK;
		if (unlikely(*type > JT_JENTRY_CONTAINER))
			jt_nav_corrupt(src, "an entry of a part has an invalid type");
	}
	return end;
}

/*
 * Copy n JEntries (fewer than a stride) to out and sum their lengths; they
 * must all be plain lengths (no end offset) of valid types, false if one
 * is not.  The inner loop of flattening wide containers, one pass over the
 * entries: the check is a running OR of each entry's top three bits plus
 * one, which stays below 4 exactly while they are 0 (string, numeric), 1
 * (booleans) or 2 (null, container); 3 is an invalid type, 4 to 7 carry
 * an end offset.
 */
static inline bool
copy_plain_lengths(char *out, const char *jentries, uint32 n, uint64 *sum)
{
	uint64		total;
	uint32		bad;
	uint32		k = 0;

	StaticAssertStmt(JT_JENTRY_CONTAINER >> 29 == 2 &&
					 JT_JENTRY_HAS_OFF >> 29 == 4,
					 "JEntry type bits moved");
	Assert(n < JT_JENTRY_OFFSET_STRIDE);
#ifdef __SSE2__
	{
		/*
		 * Four entries at a time.  A lane sums at most 7 lengths below 2^28
		 * (n is under a stride), so it cannot overflow.
		 */
		const __m128i zero = _mm_setzero_si128();
		const __m128i mask = _mm_set1_epi32(JT_JENTRY_OFFLEN_MASK);
		const __m128i one = _mm_set1_epi32(1);
		__m128i		sums = zero;
		__m128i		bits = zero;
		uint32		lanes[4];
		uint32		b[4];

		for (; k + 4 <= n; k += 4)
		{
			__m128i		e = _mm_loadu_si128((const __m128i *) (jentries + k * sizeof(uint32)));
			__m128i		len = _mm_and_si128(e, mask);

			_mm_storeu_si128((__m128i *) (out + k * sizeof(uint32)), e);

			sums = _mm_add_epi32(sums, len);
			bits = _mm_or_si128(bits, _mm_add_epi32(_mm_srli_epi32(e, 29), one));
		}
		_mm_storeu_si128((__m128i *) lanes, sums);
		_mm_storeu_si128((__m128i *) b, bits);
		total = (uint64) lanes[0] + lanes[1] + lanes[2] + lanes[3];
		bad = b[0] | b[1] | b[2] | b[3];
	}
#else
	total = 0;
	bad = 0;
#endif
	for (; k < n; k++)
	{
		uint32		e;

		memcpy(&e, jentries + k * sizeof(uint32), sizeof(uint32));
		memcpy(out + k * sizeof(uint32), &e, sizeof(uint32));
		total += e & JT_JENTRY_OFFLEN_MASK;
		bad |= (e >> 29) + 1;
	}
	*sum = total;
	return bad < 4;
}

/* How many entries from entry i on come before a stride point. */
static inline uint32
entries_to_stride(uint32 i)
{
	return (JT_JENTRY_OFFSET_STRIDE - i % JT_JENTRY_OFFSET_STRIDE) %
		JT_JENTRY_OFFSET_STRIDE;
}

/*
 * Append the JEntries of n entries of a part, from entry i on, whose bytes
 * are copied in step (so their lengths are unchanged); the entry before i
 * ends at start in the part's data.  Returns where the last one ends.
 *
 * A JEntry holds a length, except every JB_OFFSET_STRIDE'th of a
 * container, which holds an end offset.  Between the stride points of the
 * part and those of the output, runs of JEntries are the same in both: they
 * are copied as they are, and summed and checked on the way; only the
 * entries at either kind of stride point are computed one by one.
 */
static uint32
copy_jentries_in_step(JtWriter *w, JtSource *src, const char *jentries,
					  uint32 i, uint32 n, uint32 start, uint32 datalen)
{
	char	   *out = w->buf->data + w->jentries +
		(uint64) w->next * sizeof(uint32);
	uint32		next = w->next;
	uint64		end = start;
	uint64		totallen = w->totallen;

	if (totallen + (datalen - start) > JT_JENTRY_OFFLEN_MASK)
		jt_writer_too_long();
	jentries += (uint64) i * sizeof(uint32);

	for (uint32 k = 0, to_part = entries_to_stride(i),
		 to_out = entries_to_stride(next);; k++)
	{
		uint32		run = Min(Min(to_part, to_out), n - k);
		uint32		e;
		uint32		type;
		uint64		entry_end;
		uint32		entry;

		if (run > 0)
		{
			uint64		sum;

			if (!copy_plain_lengths(out + k * sizeof(uint32),
									jentries + k * sizeof(uint32), run, &sum))
				jt_nav_corrupt(src, "an entry of a part has an invalid type or a misplaced offset");
			/* checked against datalen at the next stride point, or below */
			end += sum;
			totallen += sum;
			k += run;
			to_part -= run;
			to_out -= run;
		}
		if (k == n)
			break;

		/* a stride point of the part, of the output, or of both */
		memcpy(&e, jentries + k * sizeof(uint32), sizeof(uint32));
		type = e & JT_JENTRY_TYPE_MASK;
		if (type > JT_JENTRY_CONTAINER)
			jt_nav_corrupt(src, "an entry of a part has an invalid type");
		entry_end = (e & JT_JENTRY_HAS_OFF) ? (e & JT_JENTRY_OFFLEN_MASK) :
			end + (e & JT_JENTRY_OFFLEN_MASK);
		if (entry_end < end || entry_end > datalen)
			jt_nav_corrupt(src, "an entry of a part lies outside its data");
		totallen += entry_end - end;
		if (to_out == 0)
			entry = type | (uint32) totallen | JT_JENTRY_HAS_OFF;
		else
			entry = type | (uint32) (entry_end - end);
		memcpy(out + k * sizeof(uint32), &entry, sizeof(uint32));
		end = entry_end;
		to_part = to_part == 0 ? JT_JENTRY_OFFSET_STRIDE - 1 : to_part - 1;
		to_out = to_out == 0 ? JT_JENTRY_OFFSET_STRIDE - 1 : to_out - 1;
	}
	if (end > datalen)
		jt_nav_corrupt(src, "an entry of a part lies outside its data");
	w->next = next + n;
	w->totallen = (uint32) totallen;
	return (uint32) end;
}

/*
 * Append count entries of a container (a part's root, or a container of a
 * document being cut) to a writer, from entry first on.  The container may
 * hold no references, and src must hold all of it in memory already (it
 * keeps pointers from one read while it makes others).
 *
 * An entry's bytes do not depend on where it is, except for the padding
 * before a numeric or a container.  While the output and the part are at
 * the same position modulo 4, that padding is the same in both, and the
 * entries' bytes are copied in one run; only the JEntries are written anew
 * (their offsets follow the output's positions).  An aligned entry met out
 * of step is written with its new padding, and brings the two back in
 * step: both then continue from a 4-byte boundary.
 *
 * This is the flattener's inner loop, over every element of a wide
 * container: it reads the JEntries itself, checking each against the
 * data area, rather than through the navigator entry by entry.
 */
void
jt_copy_entries(JtWriter *w, JtSource *src, const JtNode *root, uint32 first,
				uint32 count)
{
	JtEntryIter it;
	const char *jentries;
	const char *data;
	uint32		datalen;
	uint32		end = 0;
	uint32		pending;
	uint32		i;

	Assert(src->avail == src->size);
	jt_nav_iter_begin(src, root, &it);
	if ((uint64) first + count > it.nentries)
		jt_nav_corrupt(src, "a part has fewer entries than its count");
	if (count == 0)
		return;
	if ((uint64) w->next + count > w->nentries)
		elog(ERROR, "too many entries written to a jsonb container");
	jentries = jt_source_read(src, it.entries, (uint64) it.nentries * sizeof(uint32));
	datalen = (uint32) (it.end - it.data);
	data = jt_source_read(src, it.data, datalen);

	/* where entry "first" starts */
	jt_nav_iter_seek(src, &it, first);
	i = first;
	end = (uint32) it.start;
	pending = end;

	/* out of step: entries up to the first aligned one, written anew */
	if ((w->buf->len - (it.data + end)) % sizeof(uint32) != 0)
	{
		for (; i < first + count; i++)
		{
			uint32		start = end;
			uint32		type;
			uint32		pad;

			end = next_entry_end(src, jentries, i, start, datalen, &type);
			if (!jt_entry_type_is_aligned(type))
			{
				jt_writer_entry_copied(w, type, end - start);
				continue;
			}
			pad = INTALIGN(it.data + start) - (it.data + start);
			if (pad > end - start)
				jt_nav_corrupt(src, "an entry of a part is shorter than its padding");
			appendBinaryStringInfo(w->buf, data + pending, start - pending);
			jt_writer_entry(w, type, data + start + pad, end - start - pad);
			pending = end;
			i++;
			break;
		}
	}

	/* in step: the rest of the entries' bytes are copied as they are */
	if (i < first + count)
		end = copy_jentries_in_step(w, src, jentries, i, first + count - i,
									end, datalen);
	appendBinaryStringInfo(w->buf, data + pending, end - pending);
}

/* Append the bytes of the value a loaded reference stands for. */
static void
write_ref_value(Flattener *f, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	bool		object = (ref->header & JT_CONTAINER_OBJECT) != 0;
	JtWriter	w;
	uint64		rawsize = 0;
	uint32		largest = 0;
	struct varlena *scratch = NULL;

	if (ref->header & JT_CONTAINER_SCALAR)
	{
		appendBinaryStringInfo(&f->buf,
							   jt_source_read(&lr->srcs[0], lr->scalar.offset,
											  lr->scalar.length),
							   lr->scalar.length);
		return;
	}
	if (ref->nranges == 1)
	{
		/* one part: the container itself, byte for byte */
		jt_pad_to_int(&f->buf);
		if (part_is_compressed(lr, 0))
		{
			/* decompressed where it belongs, with its header just before */
			int			at = f->buf.len - VARHDRSZ;
			char		saved[VARHDRSZ];

			Assert(at >= 0);
			enlargeStringInfo(&f->buf, ref->ranges[0].rawsize);
			memcpy(saved, f->buf.data + at, VARHDRSZ);
			decompress_part(lr, 0, (struct varlena *) (f->buf.data + at));
			memcpy(f->buf.data + at, saved, VARHDRSZ);
			f->buf.len += ref->ranges[0].rawsize - VARHDRSZ;
			f->buf.data[f->buf.len] = '\0';
			return;
		}
		appendBinaryStringInfo(&f->buf, lr->srcs[0].data, lr->srcs[0].size);
		return;
	}

	/* room for all of it at once: the parts' sizes bound it */
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		rawsize += ref->ranges[r].rawsize - VARHDRSZ;
		if (part_is_compressed(lr, r))
			largest = Max(largest, (uint32) ref->ranges[r].rawsize);
	}
	if (rawsize < MaxAllocSize - f->buf.len)
		enlargeStringInfo(&f->buf, (int) rawsize);
	if (largest > 0)
		scratch = palloc(largest);

	/* several parts: their entries, keys of every part before the values */
	jt_writer_begin(&w, &f->buf, ref->header);
	for (int pass = 0; pass < (object ? 2 : 1); pass++)
	{
		for (uint32 r = 0; r < ref->nranges; r++)
		{
			uint32		n = ref->ranges[r].header & JT_CONTAINER_COUNT_MASK;

			if (part_is_compressed(lr, r))
				decompress_part(lr, r, scratch);
			jt_copy_entries(&w, &lr->srcs[r], &lr->roots[r], pass * n, n);
		}
	}
	jt_writer_end(&w);
	if (scratch)
		pfree(scratch);
}

/* Write a container of the tree, its references replaced by their values. */
static void
flatten_container(Flattener *f, JtSource *src, const JtNode *node)
{
	JtWriter	w;
	JtEntryIter it;
	JtNode		child;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();
	jt_writer_begin(&w, &f->buf, node->header);
	jt_nav_iter_begin(src, node, &it);
	while (jt_nav_iter_next(src, &it, &child))
	{
		if (child.kind == JT_NODE_REF)
		{
			LoadedRef	lr;

			load_ref(f, &child, &lr);
			jt_writer_entry_begin(&w, loaded_ref_type(&lr));
			write_ref_value(f, &lr);
			jt_writer_entry_end(&w);
			free_ref(&lr);
		}
		else if (child.kind == JT_NODE_CONTAINER)
		{
			jt_writer_entry_begin(&w, JT_JENTRY_CONTAINER);
			flatten_container(f, src, &child);
			jt_writer_entry_end(&w);
		}
		else
			jt_writer_entry(&w, jt_node_entry_type(&child),
							jt_source_read(src, child.offset, child.length),
							child.length);
	}
	jt_writer_end(&w);
}

/*
 * The value a node of a skeleton's tree stands for (the root, or a
 * container or reference inside it), as a palloc'd jsonb datum with a
 * 4-byte header; fetch supplies the raw content of each part.
 */
struct varlena *
jt_skeleton_flatten_node(JtSkeleton *skel, const JtNode *node,
						 const JtPartFetcher *fetcher)
{
	Flattener	f;
	struct varlena *result;
	bool		whole = (node == &skel->root);

	f.skel = skel;
	f.fetcher = fetcher;
	f.partno = 0;
	initStringInfo(&f.buf);
	appendStringInfoSpaces(&f.buf, VARHDRSZ);

	if (node->kind == JT_NODE_REF)
	{
		LoadedRef	lr;

		load_ref(&f, node, &lr);
		if (lr.ref.header & JT_CONTAINER_SCALAR)
			jt_nav_corrupt(&skel->src, "a long scalar was read as a container");
		write_ref_value(&f, &lr);
		free_ref(&lr);
	}
	else if (node->kind == JT_NODE_CONTAINER)
		flatten_container(&f, &skel->src, node);
	else
		elog(ERROR, "scalar passed as a container");

	/* with the whole tree flattened, every part has been used */
	if (whole && f.partno != skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "the tree refers to fewer parts than its header counts");
	result = (struct varlena *) f.buf.data;
	SET_VARSIZE(result, f.buf.len);
	return result;
}

/* The document a skeleton stands for. */
struct varlena *
jt_skeleton_flatten(JtSkeleton *skel, const JtPartFetcher *fetcher)
{
	return jt_skeleton_flatten_node(skel, &skel->root, fetcher);
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
 * base's).
 */
uint32
jt_skeleton_list_parts(JtSkeleton *skel, JtRefRange **ranges)
{
	List	   *list = NIL;
	uint32		n;
	uint32		deltas_used = 0;
	ListCell   *lc;

	jt_skeleton_walk(skel, collect_ranges, &list);
	n = list_length(list);
	if (n != skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "the tree's parts differ from its header's count");
	*ranges = palloc(Max(n, 1) * sizeof(JtRefRange));
	n = 0;
	foreach(lc, list)
	{
		const JtRefRange *range = lfirst(lc);

		if (jt_delta_for(skel, range->valueid) != NULL)
			deltas_used++;
		(*ranges)[n++] = jt_stored_range(skel, range);
	}
	list_free(list);
	if (deltas_used != skel->ndeltas)
		jt_nav_corrupt(&skel->src, "a delta names a value that is not one of the skeleton's parts");
	return n;
}
