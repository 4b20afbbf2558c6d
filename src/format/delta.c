/*-------------------------------------------------------------------------
 *
 * delta.c
 *	  Parts kept as a delta of the part they replaced (see delta.h).
 *
 * A delta is found by comparing the old content of a part with the new
 * one entry by entry, from the front and from the back: what lies between
 * the common ends is the literal.  Applying it copies entries with the
 * same writer that flattens skeletons, so the content comes back in the
 * layout PostgreSQL writes, byte for byte; its size and hash are then
 * checked against the part's directory entry, so that a damaged record
 * raises an ERROR instead of giving another document.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/delta.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "format/delta.h"
#include "jsonb/jsonb_writer.h"

/*
 * Read the delta area of a payload (after the tree) into skel.  Records
 * are checked for their own bounds here; against their part, when they
 * are applied.
 */
void
jt_delta_parse_area(JtSkeleton *skel, const char *area, uint32 len)
{
	uint32		off = 0;
	uint32		n = 0;
	uint32		header_size = jt_version_packs(skel->version) ?
		sizeof(JtDeltaHeaderPacked) : sizeof(JtDeltaHeader);

	skel->ndeltas = 0;
	skel->deltas = NULL;
	if (len == 0)
		return;
	if (len % sizeof(uint32) != 0)
		jt_nav_corrupt(&skel->src, "the delta area has a partial record");
	skel->deltas = palloc(Min(Max(skel->hdr.nparts, 1),
							  len / header_size + 1) * sizeof(JtDelta));
	while (off < len)
	{
		JtDelta    *d;
		JtPartEntry base = {0};

		if (n >= skel->hdr.nparts || n > len / header_size)
			jt_nav_corrupt(&skel->src, "a skeleton has more deltas than parts");
		if (len - off < header_size)
			jt_nav_corrupt(&skel->src, "a delta record is shorter than its header");
		d = &skel->deltas[n];
		d->header_size = header_size;
		if (jt_version_packs(skel->version))
			memcpy(&d->hdr, area + off, sizeof(JtDeltaHeaderPacked));
		else
		{
			JtDeltaHeader stored;

			memcpy(&stored, area + off, sizeof(JtDeltaHeader));
			d->hdr.valueid = stored.valueid;
			d->hdr.base_offset = 0;
			d->hdr.base_rawsize = stored.base_rawsize;
			d->hdr.base_header = stored.base_header;
			d->hdr.base_hash = stored.base_hash;
			d->hdr.first = stored.first;
			d->hdr.removed = stored.removed;
			d->hdr.literal_len = stored.literal_len;
		}
		if (jt_delta_record_size(d) > len - off ||
			d->hdr.literal_len < sizeof(uint32))
			jt_nav_corrupt(&skel->src, "a delta's literal does not fit its record");
		base.valueid = d->hdr.valueid;
		base.offset = d->hdr.base_offset;
		if (!OidIsValid(d->hdr.valueid) || jt_delta_for(skel, &base) != NULL)
			jt_nav_corrupt(&skel->src, "a delta names no part, or one named already");
		d->literal = area + off + header_size;
		off += (uint32) jt_delta_record_size(d);
		skel->ndeltas = ++n;
	}
}

/* The delta of the part stored where range (a directory entry) says. */
const JtDelta *
jt_delta_for(const JtSkeleton *skel, const JtPartEntry *range)
{
	uint64		id = jt_part_id(range);

	for (uint32 i = 0; i < skel->ndeltas; i++)
		if (jt_delta_base_id(&skel->deltas[i]) == id)
			return &skel->deltas[i];
	return NULL;
}

/*
 * The directory entry of what is stored for a part: the entry itself, or
 * for a part kept as a delta, its base's.
 */
JtPartEntry
jt_stored_range(const JtSkeleton *skel, const JtPartEntry *range)
{
	JtPartEntry stored = *range;
	const JtDelta *d;

	if (skel->ndeltas > 0 && (d = jt_delta_for(skel, range)) != NULL)
	{
		stored.rawsize = d->hdr.base_rawsize;
		stored.header = d->hdr.base_header;
		stored.hash = d->hdr.base_hash;
	}
	return stored;
}

/*
 * The content a delta makes from its base's raw content, with the delta
 * and the base checked against each other and against the part's entry
 * (range: its kind and count); lsrc gets the literal, for errors.
 */
static struct varlena *
delta_build(const JtDelta *delta, const JtPartEntry *range,
			const struct varlena *base, JtSource *lsrc)
{
	JtPartEntry stored = *range;
	JtSource	bsrc;
	JtNode		broot;
	JtNode		lroot;
	uint32		nb;
	uint32		nl;
	uint32		after;
	bool		object;
	StringInfoData buf;
	JtWriter	w;
	struct varlena *result;

	stored.rawsize = delta->hdr.base_rawsize;
	stored.header = delta->hdr.base_header;
	/* the directory's layout byte is the content's, not the base's */
	jt_part_check(&bsrc, &stored, -1, base, &broot);

	jt_memory_source(lsrc, delta->literal, delta->hdr.literal_len, false);
	jt_nav_root(lsrc, &lroot);
	if ((lroot.header & ~JT_CONTAINER_COUNT_MASK) !=
		(broot.header & ~JT_CONTAINER_COUNT_MASK) ||
		(broot.header & JT_CONTAINER_SCALAR) ||
		(range->header & ~JT_CONTAINER_COUNT_MASK) !=
		(broot.header & ~JT_CONTAINER_COUNT_MASK))
		jt_nav_corrupt(lsrc, "a delta's literal or base is not of its part's kind");
	if (!jt_nav_entries_fill(lsrc, &lroot))
		jt_nav_corrupt(lsrc, "a delta's literal has entries past its data");
	nb = jt_node_count(&broot);
	nl = jt_node_count(&lroot);
	if (delta->hdr.first > nb || delta->hdr.removed > nb - delta->hdr.first ||
		(uint64) nb - delta->hdr.removed + nl !=
		(range->header & JT_CONTAINER_COUNT_MASK))
		jt_nav_corrupt(lsrc, "a delta's edit does not fit its base");
	after = nb - delta->hdr.first - delta->hdr.removed;
	object = (broot.header & JT_CONTAINER_OBJECT) != 0;

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	jt_writer_begin(&w, &buf, range->header);
	/* an object's keys, then its values, each in the same three runs */
	for (int pass = 0; pass < (object ? 2 : 1); pass++)
	{
		jt_copy_entries(&w, &bsrc, &broot, pass * nb, delta->hdr.first);
		jt_copy_entries(&w, lsrc, &lroot, pass * nl, nl);
		jt_copy_entries(&w, &bsrc, &broot,
						pass * nb + delta->hdr.first + delta->hdr.removed, after);
	}
	jt_writer_end(&w);
	result = (struct varlena *) buf.data;
	SET_VARSIZE(result, buf.len);
	return result;
}

/*
 * The content of a part kept as a delta (range, its directory entry, in a
 * skeleton of format version version), from its base's raw content,
 * checked against both entries.
 */
struct varlena *
jt_delta_apply(const JtDelta *delta, const JtPartEntry *range,
			   const struct varlena *base, uint32 version)
{
	JtSource	lsrc;
	struct varlena *result = delta_build(delta, range, base, &lsrc);

	if (VARSIZE(result) != range->rawsize ||
		jt_part_hash(version, VARDATA(result),
					 VARSIZE(result) - VARHDRSZ) != range->hash)
		jt_nav_corrupt(&lsrc, "a delta does not give the content its part's entry describes");
	return result;
}

/*
 * Every entry of a container, described once in order (for objects the
 * keys, then the values): comparing entries by index then costs no walk
 * back to the nearest stored offset.
 */
static JtNode *
describe_entries(JtSource *src, const JtNode *root)
{
	JtNode	   *entries;

	entries = palloc(sizeof(JtNode) * Max(jt_node_entry_count(root), 1));
	jt_nav_describe_all(src, root, entries);
	return entries;
}

/*
 * The root container of a part in memory, with its entries described in
 * full (describe_entries()) or, when only a few are compared, read one by
 * one.
 */
typedef struct PartEntries
{
	JtSource	src;
	JtNode		root;
	uint32		count;			/* pairs or elements */
	const JtNode *all;			/* every entry, or NULL */
} PartEntries;

static inline const JtNode *
part_entry(PartEntries *part, uint32 i, JtNode *scratch)
{
	if (part->all)
		return &part->all[i];
	jt_nav_entry(&part->src, &part->root, i, scratch);
	return scratch;
}

/*
 * Are entries i of a and j of b the same bytes of the same type?  Both
 * sources are in memory whole, and the entries were described from them,
 * so within their bounds.
 */
static inline bool
same_entry(PartEntries *a, uint32 i, PartEntries *b, uint32 j)
{
	JtNode		xs;
	JtNode		ys;
	const JtNode *x = part_entry(a, i, &xs);
	const JtNode *y = part_entry(b, j, &ys);

	Assert((uint64) x->offset + x->length <= a->src.avail);
	Assert((uint64) y->offset + y->length <= b->src.avail);
	if (x->kind != y->kind || x->length != y->length)
		return false;
	return memcmp(a->src.data + x->offset, b->src.data + y->offset,
				  x->length) == 0;
}

/* Pair (or element) i of a and j of b: the same? */
static inline bool
same_pair(PartEntries *a, uint32 i, PartEntries *b, uint32 j, bool object)
{
	if (!same_entry(a, i, b, j))
		return false;
	return !object || same_entry(a, a->count + i, b, b->count + j);
}

/*
 * Does the delta give target back from base?  It must, by construction;
 * like the toaster's check of a whole skeleton, this guards the stored
 * data against a bug: a delta that would not read back is not used, and
 * the part is written whole.
 */
static bool
delta_gives_back(const struct varlena *base, const struct varlena *target,
				 StringInfo literal, uint32 first, uint32 removed)
{
	JtDelta		delta;
	JtPartEntry range = {0};
	JtSource	src;
	JtSource	lsrc;
	JtNode		root;
	struct varlena *result;
	bool		same;

	jt_memory_source(&src, VARDATA(base), VARSIZE(base) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	delta.hdr.base_rawsize = VARSIZE(base);
	delta.hdr.base_header = root.header;
	delta.hdr.first = first;
	delta.hdr.removed = removed;
	delta.hdr.literal_len = literal->len;
	delta.literal = literal->data;
	jt_memory_source(&src, VARDATA(target), VARSIZE(target) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	range.rawsize = VARSIZE(target);
	range.header = root.header;
	/* the bytes are compared whole: no need for the hash check */
	result = delta_build(&delta, &range, base, &lsrc);
	same = VARSIZE(result) == VARSIZE(target) &&
		memcmp(result, target, VARSIZE(target)) == 0;
	pfree(result);
	if (!same)
		ereport(WARNING,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("jsonb_toaster wrote a changed part whole"),
				 errdetail("Its delta would not give back the same bytes."),
				 errhint("Please report this as a bug of jsonb_toaster.")));
	return same;
}

/*
 * The delta that makes target (a part's new content) from base (what is
 * stored for it), both jsonb datums whose roots are containers of one
 * kind: the literal is written to literal (reset first).  False when the
 * literal would take more than budget bytes, or the delta would keep
 * fewer than half of the base's entries.  base_entries and target_entries,
 * if not NULL, are the entries of the two roots as describe_entries()
 * gives them, from a caller that walked them already.  A caller that
 * knows the first same_head and the last same_tail pairs (or elements) of
 * the two to be the same says so: the entries compared are then few, and
 * read one by one when not given.
 */
bool
jt_delta_make(const struct varlena *base, const JtNode *base_entries,
			  const struct varlena *target, const JtNode *target_entries,
			  uint32 same_head, uint32 same_tail, uint32 budget,
			  StringInfo literal, uint32 *first, uint32 *removed)
{
	PartEntries b;
	PartEntries t;
	uint32		head = same_head;
	uint32		tail = same_tail;
	uint32		nl;
	bool		object;
	bool		known = same_head > 0 || same_tail > 0;
	JtWriter	w;

	jt_memory_source(&b.src, VARDATA(base), VARSIZE(base) - VARHDRSZ, false);
	jt_memory_source(&t.src, VARDATA(target), VARSIZE(target) - VARHDRSZ,
					 false);
	jt_nav_root(&b.src, &b.root);
	jt_nav_root(&t.src, &t.root);
	if ((b.root.header & ~JT_CONTAINER_COUNT_MASK) !=
		(t.root.header & ~JT_CONTAINER_COUNT_MASK) ||
		(b.root.header & JT_CONTAINER_SCALAR))
		return false;
	object = (b.root.header & JT_CONTAINER_OBJECT) != 0;
	b.count = jt_node_count(&b.root);
	t.count = jt_node_count(&t.root);
	if (head + tail > Min(b.count, t.count))
		elog(ERROR, "jsonb_toaster: %u + %u pairs said to be kept of %u and %u",
			 head, tail, b.count, t.count);
	b.all = base_entries;
	t.all = target_entries;
	Assert(head == 0 || same_pair(&b, head - 1, &t, head - 1, object));
	Assert(tail == 0 || same_pair(&b, b.count - tail, &t, t.count - tail,
								  object));
	if (b.all == NULL && !known)
		b.all = describe_entries(&b.src, &b.root);
	if (t.all == NULL && !known)
		t.all = describe_entries(&t.src, &t.root);
	while (head < Min(b.count, t.count) - tail &&
		   same_pair(&b, head, &t, head, object))
		head++;
	while (tail < Min(b.count, t.count) - head &&
		   same_pair(&b, b.count - 1 - tail, &t, t.count - 1 - tail, object))
		tail++;
	nl = t.count - head - tail;
	if (b.all != NULL && b.all != base_entries)
		pfree((JtNode *) b.all);
	if (t.all != NULL && t.all != target_entries)
		pfree((JtNode *) t.all);

	/*
	 * The base must stay mostly in use: a part kept alive for a few of its
	 * entries would hold dead bytes for as long as the row lives.
	 */
	if ((uint64) (head + tail) * 2 < b.count)
		return false;

	resetStringInfo(literal);
	jt_writer_begin(&w, literal,
					(t.root.header & ~JT_CONTAINER_COUNT_MASK) | nl);
	jt_copy_entries(&w, &t.src, &t.root, head, nl);
	if (object)
		jt_copy_entries(&w, &t.src, &t.root, t.count + head, nl);
	jt_writer_end(&w);
	if ((uint32) literal->len > budget)
		return false;
	*first = head;
	*removed = b.count - head - tail;
	return delta_gives_back(base, target, literal, head,
							b.count - head - tail);
}

/*
 * Append a record to the delta area of a pointer of format version
 * version: base is the stored part's entry.
 */
void
jt_delta_append(StringInfo area, uint32 version, const JtPartEntry *base,
				uint32 first, uint32 removed, const char *literal,
				uint32 literal_len)
{
	static const char padding[sizeof(uint32)] = {0};

	if (jt_version_packs(version))
	{
		JtDeltaHeaderPacked hdr;

		hdr.valueid = base->valueid;
		hdr.base_offset = base->offset;
		hdr.base_rawsize = base->rawsize;
		hdr.base_header = base->header;
		hdr.base_hash = base->hash;
		hdr.first = first;
		hdr.removed = removed;
		hdr.literal_len = literal_len;
		appendBinaryStringInfo(area, (const char *) &hdr, sizeof(hdr));
	}
	else
	{
		JtDeltaHeader hdr;

		if (base->offset != 0)
			elog(ERROR, "a packed part cannot be a delta's base in format version %u",
				 version);
		hdr.valueid = base->valueid;
		hdr.base_rawsize = base->rawsize;
		hdr.base_header = base->header;
		hdr.base_hash = base->hash;
		hdr.first = first;
		hdr.removed = removed;
		hdr.literal_len = literal_len;
		appendBinaryStringInfo(area, (const char *) &hdr, sizeof(hdr));
	}
	appendBinaryStringInfo(area, literal, literal_len);
	/* records are 4-byte multiples, wherever the area starts */
	appendBinaryStringInfo(area, padding, INTALIGN(literal_len) - literal_len);
}

/*
 * The bytes skel's replacement records take in its delta area, but that of
 * value except: what the pointer carries to be written, not stored.
 */
uint32
jt_delta_carried_len(const JtSkeleton *skel, uint64 except)
{
	uint64		len = 0;

	for (uint32 i = 0; i < skel->ndeltas; i++)
		if (jt_delta_base_id(&skel->deltas[i]) != except &&
			jt_delta_is_replacement(&skel->deltas[i]))
			len += jt_delta_record_size(&skel->deltas[i]);
	return (uint32) len;
}

/*
 * Append the delta records of skel to area, but those of the nexcept
 * parts in except (jt_part_id()), and the replacements unless asked for.
 */
void
jt_delta_area_copy_except(const JtSkeleton *skel, const uint64 *except,
						  uint32 nexcept, bool replacements, StringInfo area)
{
	for (uint32 i = 0; i < skel->ndeltas; i++)
	{
		const JtDelta *d = &skel->deltas[i];
		JtPartEntry base = {0};
		bool		excepted = false;

		for (uint32 e = 0; e < nexcept && !excepted; e++)
			excepted = jt_delta_base_id(d) == except[e];
		if (excepted || (!replacements && jt_delta_is_replacement(d)))
			continue;
		base.valueid = d->hdr.valueid;
		base.offset = d->hdr.base_offset;
		base.rawsize = d->hdr.base_rawsize;
		base.header = d->hdr.base_header;
		base.hash = d->hdr.base_hash;
		jt_delta_append(area, skel->version, &base, d->hdr.first,
						d->hdr.removed, d->literal, d->hdr.literal_len);
	}
}

/* The same, but the record of part except (JT_NO_PART: none). */
void
jt_delta_area_copy(const JtSkeleton *skel, uint64 except, bool replacements,
				   StringInfo area)
{
	jt_delta_area_copy_except(skel, &except, 1, replacements, area);
}
