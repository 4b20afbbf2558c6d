/*-------------------------------------------------------------------------
 *
 * document_size.c
 *	  The raw size of the document a change of one part makes, told without
 *	  reading the other parts: from the layout of the changed part's values
 *	  (values written before layout bytes), or from the directories' layout
 *	  bytes (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/document_size.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"

#include "format/skeleton.h"
#include "update/document_size.h"

/*
 * Lay out a part from its root (in src), describing every entry of it
 * (checked against the part's bounds) on the way.
 *
 * The values' ends from the four positions are followed as the end from
 * position 0 plus a difference for each.  Once a value has been aligned
 * the four ends agree modulo 4, so every later alignment pads them alike
 * and the differences stay: they are computed at the first aligned value.
 */
typedef struct ValueEnds
{
	uint64		end;			/* from position 0 */
	uint64		diff[4];		/* from each position, less end */
	bool		aligned_once;
} ValueEnds;

static inline void
value_ends_begin(ValueEnds *ends)
{
	ends->end = 0;
	for (int phase = 0; phase < 4; phase++)
		ends->diff[phase] = phase;
	ends->aligned_once = false;
}

static inline void
value_ends_add(ValueEnds *ends, JtNodeKind kind, uint32 length)
{
	bool		aligned = kind == JT_NODE_NUMERIC || kind == JT_NODE_CONTAINER;

	if (aligned && !ends->aligned_once)
	{
		for (int phase = 1; phase < 4; phase++)
			ends->diff[phase] = TYPEALIGN(4, ends->end + phase) -
				TYPEALIGN(4, ends->end);
		ends->aligned_once = true;
	}
	ends->end = length + (aligned ? TYPEALIGN(4, ends->end) : ends->end);
}

static inline void
value_ends_finish(const ValueEnds *ends, JtPartLayout *layout)
{
	for (int phase = 0; phase < 4; phase++)
		layout->value_end[phase] = ends->end + ends->diff[phase];
}

void
jt_lay_out_part_root(JtSource *src, const JtNode *root, JtPartLayout *layout)
{
	uint32		count = jt_node_count(root);

	/* an array's elements are laid out as values, with no keys */
	uint32		nkeys = jt_node_first_value_index(root);
	ValueEnds	ends;

	layout->count = count;
	layout->key_bytes = 0;
	layout->entries = palloc(sizeof(JtNode) * Max(nkeys + count, 1));
	jt_nav_describe_all(src, root, layout->entries);

	for (uint32 i = 0; i < nkeys; i++)
		layout->key_bytes += layout->entries[i].length;
	value_ends_begin(&ends);
	for (uint32 i = nkeys; i < nkeys + count; i++)
		value_ends_add(&ends, layout->entries[i].kind, layout->entries[i].length);
	value_ends_finish(&ends, layout);
}

static int64
layout_value_span(const JtPartLayout *layout, int phase)
{
	return (int64) layout->value_end[phase] - phase;
}

void
jt_lay_out_part(const struct varlena *part, JtPartLayout *layout)
{
	JtSource	src;
	JtNode		root;

	jt_memory_source(&src, VARDATA(part), VARSIZE(part) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	jt_lay_out_part_root(&src, &root, layout);
}

/* Walk every entry of a part's root, each checked against its bounds. */
void
jt_check_part_entries(const struct varlena *part)
{
	JtPartLayout layout;

	jt_lay_out_part(part, &layout);
	if (layout.entries)
		pfree(layout.entries);
}

/*
 * The layout of a part made by splicing one laid out as old: the pairs
 * kept are the same bytes, so their lengths are known without walking the
 * new part's entries.
 */
void
jt_layout_spliced(const JtPartLayout *old, const JtSplice *splice,
				  JtPartLayout *layout)
{
	const JtNode *values = old->entries + old->count;
	ValueEnds	ends;

	layout->count = old->count - (splice->removed ? 1 : 0) +
		(splice->added ? 1 : 0);
	layout->key_bytes = old->key_bytes;
	if (splice->removed && !splice->added)
		layout->key_bytes -= splice->keylen;
	else if (splice->added && !splice->removed)
		layout->key_bytes += splice->keylen;
	layout->entries = NULL;

	value_ends_begin(&ends);
	for (uint32 i = 0; i < splice->index; i++)
		value_ends_add(&ends, values[i].kind, values[i].length);
	if (splice->added)
		value_ends_add(&ends, splice->value_kind, splice->value_length);
	for (uint32 i = splice->index + (splice->removed ? 1 : 0);
		 i < old->count; i++)
		value_ends_add(&ends, values[i].kind, values[i].length);
	value_ends_finish(&ends, layout);
}

/*
 * The raw size of the document made by putting a new part (laid out as
 * new) in place of part r (old) of the nranges of a split root object
 * stored with raw size old_rawsize, when these two parts alone tell it;
 * false when it depends on where the part lies modulo 4 in the document.
 *
 * The root's keys come before all the values: a change of the part's key
 * bytes by other than a multiple of 4 moves the padding of the values of
 * the parts before it, which are not at hand, unless there are none.  The
 * part's values start at a position modulo 4 not known here: the document
 * is known to grow by the same amount wherever they start, and the values
 * after them to keep their padding, when the growth is the same for the
 * four positions and a multiple of 4 (or no part follows).
 */
static bool
patched_raw_size(int32 old_rawsize, const JtPartLayout *old,
				 const JtPartLayout *new, uint32 r, uint32 nranges,
				 int32 *rawsize)
{
	int64		shift;
	int64		growth = 0;

	shift = new->key_bytes - old->key_bytes;
	if (r > 0 && shift % 4 != 0)
		return false;
	for (int phase = 0; phase < 4; phase++)
	{
		int			new_phase = (int) (((phase + shift) % 4 + 4) % 4);
		int64		g;

		/* JEntries (8 bytes a pair) and keys, then the values */
		g = 8 * ((int64) new->count - old->count) + shift +
			layout_value_span(new, new_phase) -
			layout_value_span(old, phase);
		if (phase > 0 && g != growth)
			return false;
		growth = g;
	}
	if (r + 1 < nranges && growth % 4 != 0)
		return false;
	if ((int64) old_rawsize + growth > (int64) JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (old_rawsize + growth);
	return true;
}

/*
 * The raw size of the document made by putting a new part (with directory
 * entry range, and layout byte new_byte or laid out as new) in place of
 * part r (old) of a stored split root object (pointer, parsed into skel and
 * ref), when known without reading the other parts: from the layout bytes
 * of the directory (format version 3), whose sum for the stored document
 * is checked against its raw size, or else when the two parts alone tell
 * it.
 */
bool
jt_patched_document_size(struct varlena *pointer, JtSkeleton *skel,
						 const JtRef *ref, uint32 r, const JtFetchedPart *old,
						 const JtPartLayout *new, uint8 new_byte,
						 const JtPartEntry *range, int32 *rawsize)
{
	varatt_custom header;
	JtRef		patched = *ref;
	JtPartEntry *ranges;
	uint8	   *layouts;
	uint64		size;

	VARATT_CUSTOM_GET_HEADER(header, pointer);
	if (ref->layouts == NULL)
		return patched_raw_size(header.va_rawsize, &old->layout, new, r,
								ref->nranges, rawsize);
	if (!jt_ref_flat_size(ref, &size) ||
		size + VARHDRSZ != (uint64) header.va_rawsize)
		jt_nav_corrupt(&skel->src, "a reference's layout bytes do not add up to the value's raw size");

	ranges = palloc(ref->nranges * sizeof(JtPartEntry));
	memcpy(ranges, ref->ranges, ref->nranges * sizeof(JtPartEntry));
	ranges[r] = *range;
	layouts = palloc(ref->nranges);
	memcpy(layouts, ref->layouts, ref->nranges);
	layouts[r] = new_byte;
	patched.ranges = ranges;
	patched.layouts = layouts;
	/* the stored reference gave a size: so does the patched one */
	if (!jt_ref_flat_size(&patched, &size))
		elog(ERROR, "jsonb_toaster: a patched reference has no size");
	pfree(ranges);
	pfree(layouts);
	if (size + VARHDRSZ > JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (size + VARHDRSZ);
	return true;
}


/*
 * The raw size of the document a patched skeleton stands for, from its
 * tree and its references' layout bytes (format version 3): false if they
 * do not tell it, or it is too large for a jsonb.
 */
bool
jt_tree_document_size(JtSkeleton *patched, int32 *rawsize)
{
	uint64		size;

	if (!jt_skeleton_flat_size(patched, &size) ||
		size + VARHDRSZ > JT_JENTRY_OFFLEN_MASK)
		return false;
	*rawsize = (int32) (size + VARHDRSZ);
	return true;
}
