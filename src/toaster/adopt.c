/*-------------------------------------------------------------------------
 *
 * adopt.c
 *	  The toaster's adopt callback (patched servers only): storing, in place
 *	  of the value it was made from, a pointer jsonb_set() or the like
 *	  returned, after writing the parts it carries whole.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/adopt.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/toast_custom.h"
#include "catalog/pg_type.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "format/delta.h"
#include "format/pointer.h"
#include "toaster/adopt.h"
#include "toaster/logical_log.h"
#include "toaster/part_write.h"
#include "toaster/settings.h"
#include "toaster/sharing.h"
#include "toaster/tree_outside.h"

static struct varlena *adopt_listed(Relation rel, Form_pg_attribute att,
									struct varlena *value,
									struct varlena *oldvalue);
static uint32 tree_parts(struct varlena *pointer);

/* Where, in a pointer's payload, the entries of the parts it carries lie. */
typedef struct ReplacedRanges
{
	const JtSkeleton *skel;
	const char *payload;
	uint32		payload_len;	/* of its header and tree */
	uint32	   *offsets;		/* by delta record: its entry's offset */
	uint32	   *matches;		/* by delta record: entries naming its base */
} ReplacedRanges;

/*
 * Reference visitor: note the directory entry of each part a replacement
 * record stands for (the entry names the record's base).
 */
static void
find_replaced_ranges(void *arg, const JtRef *ref, List *path)
{
	ReplacedRanges *rr = arg;

	for (uint32 r = 0; r < ref->nranges; r++)
		for (uint32 i = 0; i < rr->skel->ndeltas; i++)
		{
			const JtDelta *d = &rr->skel->deltas[i];
			uint64		offset;

			if (jt_delta_base_id(d) != jt_part_id(&ref->ranges[r]) ||
				!jt_delta_is_replacement(d))
				continue;
			offset = jt_entry_offset(ref->refdata - rr->payload, r,
									 rr->skel->version);
			if (ref->refdata < rr->payload ||
				offset + jt_entry_size(rr->skel->version) > rr->payload_len)
				elog(ERROR, "jsonb_toaster: a reference lies outside its pointer");
			rr->offsets[i] = (uint32) offset;
			rr->matches[i]++;
		}
}

/* Point the directory entry at entry, of format version version, at where. */
static void
point_entry_at(char *entry, uint32 version, const JtPartEntry *where)
{
	JtPartEntry range;

	jt_entry_read(entry, version, &range);
	jt_entry_set_location(&range, where);
	jt_entry_write(entry, version, &range);
}

/*
 * The pointer to store for value, whose replacement records (delta.h)
 * carry the parts they stand for, at offsets[i] for record i: each such
 * part written now, its directory entry pointed at it, the record
 * dropped.  The base each replaced stays the old row version's, which
 * deletes it.  A tree that may lie outside the row goes with the parts
 * (a pointer of format version 7, whose old version's tree did).
 */
static struct varlena *
write_replaced_parts(Relation rel, Form_pg_attribute att, struct varlena *value,
					 const JtSkeleton *skel, const uint32 *offsets)
{
	varatt_custom header;
	JtSkeletonInfo hdr;
	const char *stored_payload = jt_pointer_payload(value, NULL);
	char	   *payload;
	uint64		stored_outside;
	StringInfoData deltas;
	JtPartWriter writer;
	uint32	   *written = palloc(Max(skel->ndeltas, 1) * sizeof(uint32));
	uint32		tree_part = UINT32_MAX;
	char	   *tree;

	VARATT_CUSTOM_GET_HEADER(header, value);
	stored_outside = header.va_storedsize - header.va_size;
	jt_payload_read_info(stored_payload, &hdr);
	payload = palloc(JT_PAYLOAD_TREE_OFFSET + hdr.tree_size);
	memcpy(payload, stored_payload, JT_PAYLOAD_TREE_OFFSET + hdr.tree_size);
	tree = payload + JT_PAYLOAD_TREE_OFFSET;

	/* an UPDATE, whose TOAST writes take no options */
	jt_part_writer_begin(&writer, rel, jt_column_compression(att), 0,
						 jt_version_packs(skel->version),
						 jt_version_has_units(skel->version) ? jt_unit_size : 0);
	for (uint32 i = 0; i < skel->ndeltas; i++)
	{
		const JtDelta *d = &skel->deltas[i];
		JtPartEntry range;
		JtPartEntry stored;
		struct varlena *part;

		written[i] = UINT32_MAX;
		if (!jt_delta_is_replacement(d))
			continue;
		part = palloc(VARHDRSZ + d->hdr.literal_len);
		SET_VARSIZE(part, VARHDRSZ + d->hdr.literal_len);
		memcpy(VARDATA(part), d->literal, d->hdr.literal_len);
		jt_entry_read(payload + offsets[i], skel->version, &range);
		stored = jt_stored_range(skel, &range);
		written[i] = jt_part_writer_add(&writer, part,
										jt_stored_compressed(&stored));
		pfree(part);
		elog(DEBUG1, "jsonb_toaster: wrote the part jsonb_set() or the like carried whole");
	}
	/* the stored parts the entries named before are not named any more */
	for (uint32 i = 0; i < skel->ndeltas; i++)
	{
		JtPartEntry range;

		if (written[i] == UINT32_MAX)
			continue;
		jt_entry_read(payload + offsets[i], skel->version, &range);
		stored_outside -= jt_entry_stored_share(&range);
	}
	if (jt_version_has_tree_outside(skel->version) &&
		jt_tree_may_leave_row(tree, hdr.tree_size))
	{
		bool		must = jt_tree_must_leave_row(tree, hdr.tree_size);

		/* the tree names the parts as they are placed (format.h) */
		jt_part_writer_seal(&writer, must ? hdr.tree_size : 0);
		for (uint32 i = 0; i < skel->ndeltas; i++)
		{
			JtPartEntry placed;

			if (written[i] == UINT32_MAX)
				continue;
			jt_part_writer_placed(&writer, written[i], &placed);
			point_entry_at(payload + offsets[i], skel->version, &placed);
		}
		tree_part = jt_tree_add_part(&writer, tree, hdr.tree_size);
	}
	jt_part_writer_finish(&writer);
	for (uint32 i = 0; i < skel->ndeltas; i++)
	{
		const JtPartEntry *where;

		if (written[i] == UINT32_MAX)
			continue;
		where = jt_part_writer_entry(&writer, written[i]);
		stored_outside += jt_entry_stored_share(where);
		if (tree_part == UINT32_MAX)
			point_entry_at(payload + offsets[i], skel->version, where);
	}
	initStringInfo(&deltas);
	jt_delta_area_copy(skel, JT_NO_PART, false, &deltas);
	if (tree_part != UINT32_MAX)
		return jt_tree_part_pointer(&hdr, &writer, tree_part, tree,
									deltas.data, deltas.len,
									header.va_rawsize, stored_outside,
									jt_patched_version(value));
	return jt_make_pointer(&hdr, tree, deltas.data, deltas.len,
						   header.va_rawsize, stored_outside,
						   jt_patched_version(value));
}

/*
 * Would storing value, a pointer made by jt_patch_pointer() whose stored
 * parts (jt_pointer_parts()) are ranges[0 .. n-1], keep more dead bytes
 * than live ones in the TOAST values it names (see sharing.c)?  As it will
 * be stored: a part it carries whole is written to a value of its
 * own, so its entry's stored part is not named any more, and the part is
 * counted live at its raw size scaled by its base's compression (it is
 * compressed if its base was).  nparts_old counts the parts of the value
 * it replaces, the part holding a tree aside: a pointer that names the
 * same parts (its changes kept as deltas) changes nothing.
 */
static bool
keeps_too_many_dead(struct varlena *value, const JtPartEntry *ranges,
					uint32 n, uint32 nparts_old)
{
	JtSkeleton	skel;
	JtPartEntry *kept_ranges;
	uint32		kept = 0;
	uint64		carried = 0;
	bool		carries = false;
	bool		result;

	jt_parse_pointer(value, &skel);
	for (uint32 i = 0; i < skel.ndeltas; i++)
		carries |= jt_delta_is_replacement(&skel.deltas[i]);
	/* every part of the value it replaces, and no other: nothing changes */
	if (!carries && skel.hdr.nparts == nparts_old)
		return false;
	kept_ranges = palloc(Max(n, 1) * sizeof(JtPartEntry));
	for (uint32 i = 0; i < n; i++)
	{
		const JtDelta *d = skel.ndeltas > 0 ? jt_delta_for(&skel, &ranges[i]) : NULL;

		if (d != NULL && jt_delta_is_replacement(d))
		{
			/* compressed as its base was, it will take about as much */
			uint64		base_raw = Max(d->hdr.base_rawsize - VARHDRSZ, 1);
			uint64		share = jt_entry_stored_share(&ranges[i]);

			carried += share >= base_raw ? d->hdr.literal_len :
				d->hdr.literal_len * share / base_raw;
		}
		else
			kept_ranges[kept++] = ranges[i];
	}
	result = jt_parts_keep_too_many_dead(kept_ranges, kept, carried);
	pfree(kept_ranges);
	return result;
}

/*
 * May a pointer of size bytes, whose skeleton (tree and deltas) takes
 * skeleton_size of them, take the place of oldvalue in column attnum of a
 * row of rel?  For a column with an inline budget of its own, not if the
 * skeleton exceeds it, whatever oldvalue's size (a budget lowered since
 * oldvalue was stored applies to the values changed after).  Otherwise,
 * not if larger than oldvalue and than TOAST's target for a whole row (the
 * table's toast_tuple_target; the room the row's other columns leave is
 * not known here).
 */
static bool
fits_in_place(Relation rel, int attnum, uint64 size, uint64 skeleton_size,
			  struct varlena *oldvalue)
{
	int32		budget;

	if (jt_column_budget_option(rel, attnum, &budget) &&
		skeleton_size > (uint64) budget)
		return false;
	return size <= Max(VARSIZE_EXTERNAL(oldvalue),
					   (uint32) RelationGetToastTupleTarget(rel, TOAST_TUPLE_TARGET));
}

/*
 * What to store for value, a pointer made by jt_patch_pointer() whose parts
 * are all oldvalue's: value itself, or, when it carries parts whole, a
 * pointer to them, written now.  NULL when what would be stored does not
 * fit in oldvalue's place, or a part carried does not match its entry;
 * then nothing is written.
 */
static struct varlena *
adopted_pointer(Relation rel, Form_pg_attribute att, struct varlena *value,
				struct varlena *oldvalue)
{
	JtSkeleton	skel;
	ReplacedRanges rr;
	uint64		size = VARSIZE_EXTERNAL(value);
	uint32		nreplaced = 0;
	bool		tree_must;

	jt_parse_pointer(value, &skel);
	for (uint32 i = 0; i < skel.ndeltas; i++)
		if (jt_delta_is_replacement(&skel.deltas[i]))
		{
			nreplaced++;
			size -= jt_delta_record_size(&skel.deltas[i]);
		}
	/*
	 * A tree no row takes is stored outside it, the row keeping its entry:
	 * what it holds besides its wide directories counts as if in the row
	 */
	tree_must = !skel.tree_missing &&
		jt_version_has_tree_outside(skel.version) &&
		jt_tree_must_leave_row(skel.tree, skel.hdr.tree_size);
	if (tree_must)
		size -= skel.hdr.tree_size -
			jt_tree_budget_bytes(skel.tree, skel.hdr.tree_size);
	if (!fits_in_place(rel, att->attnum, size,
					   size - VARHDRSZ_CUSTOM - JT_PAYLOAD_TREE_OFFSET, oldvalue))
		return NULL;
	if (nreplaced == 0)
	{
		/* nothing to write: the old tree part with edits, if it had one */
		struct varlena *edited =
			jt_tree_edited_pointer(rel, value, oldvalue,
								   jt_column_inline_budget(rel, att->attnum));

		if (edited != NULL || !tree_must)
			return edited != NULL ? edited : value;
		/* else the tree alone, written below */
	}
	/* parts to write lie in a tree in memory, never in one read from TOAST */
	if (skel.tree_missing)
		return NULL;

	/* the directory entries lie in the tree, which the payload starts with */
	rr.skel = &skel;
	rr.payload = jt_pointer_payload(value, NULL);
	rr.payload_len = JT_PAYLOAD_TREE_OFFSET + skel.hdr.tree_size;
	rr.offsets = palloc0(skel.ndeltas * sizeof(uint32));
	rr.matches = palloc0(skel.ndeltas * sizeof(uint32));
	jt_skeleton_walk(&skel, find_replaced_ranges, &rr);
	for (uint32 i = 0; i < skel.ndeltas; i++)
	{
		const JtDelta *d = &skel.deltas[i];
		JtPartEntry range;

		if (!jt_delta_is_replacement(d))
			continue;
		/* one entry, or the pointer is damaged: leave it to be read back */
		if (rr.matches[i] != 1)
			return NULL;
		jt_entry_read(rr.payload + rr.offsets[i], skel.version, &range);
		if ((uint64) range.rawsize != VARHDRSZ + (uint64) d->hdr.literal_len)
			return NULL;
	}
	return write_replaced_parts(rel, att, value, &skel, rr.offsets);
}

/*
 * Take a pointer made by jt_patch_pointer() in place of the value it was
 * made from: only if every part it refers to is one that value owns, in
 * this table, so that one version chain owns each part.
 */
struct varlena *
jt_adopt(Relation rel, int attnum, struct varlena *value,
		 struct varlena *oldvalue)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	Oid			toastrelid = CustomToastPointerRelid(rel);
	struct varlena *result = NULL;

	/*
	 * A pointer of a later format version than the one to write goes to the
	 * general path, which writes that version (for a standby or a release
	 * that reads no later one).
	 */
	if (att->atttypid != JSONBOID || !OidIsValid(toastrelid) ||
		custom_toaster_id(value) != JSONB_TOASTER_ID ||
		custom_toaster_id(oldvalue) != JSONB_TOASTER_ID ||
		jt_pointer_version(value) > (uint32) jt_format_version)
		return NULL;

	result = adopt_listed(rel, att, value, oldvalue);
	if (result == NULL)
		return NULL;
	elog(DEBUG1, "jsonb_toaster: stored the pointer jsonb_set() or the like returned");
	if (RelationIsLogicallyLogged(rel))
		jt_log_shared_values(rel, result, oldvalue);
	return result;
}

/* The parts holding a stored pointer's tree: 1 if it lies outside the row. */
static uint32
tree_parts(struct varlena *pointer)
{
	return jt_pointer_tree_outside(pointer) ? 1 : 0;
}

/*
 * jt_adopt() for any pointer: value is taken if every part it names, once
 * listed, is one oldvalue owns in rel.
 */
static struct varlena *
adopt_listed(Relation rel, Form_pg_attribute att, struct varlena *value,
			 struct varlena *oldvalue)
{
	Oid			toastrelid = CustomToastPointerRelid(rel);
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	JtPartEntry *ranges;
	JtKeptParts *owned;
	Oid			its_toastrelid;
	uint32		n;
	bool		taken = true;
	struct varlena *result = NULL;

	work = AllocSetContextCreate(caller, "jsonb_toaster adopt",
								 ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(work);
	n = jt_pointer_parts(value, &its_toastrelid, &ranges);
	owned = jt_kept_parts(oldvalue, toastrelid);
	if (its_toastrelid != toastrelid || owned == NULL)
		taken = false;
	for (uint32 i = 0; i < n && taken; i++)
		taken = jt_part_is_kept(owned, ranges[i].valueid);
	/* the general path gives up values left mostly dead (sharing.c) */
	if (taken && keeps_too_many_dead(value, ranges, n,
									 owned->nvalues - tree_parts(oldvalue)))
	{
		elog(DEBUG1, "jsonb_toaster: a pointer jsonb_set() or the like returned keeps more dead bytes than live ones");
		taken = false;
	}
	if (taken)
		result = adopted_pointer(rel, att, value, oldvalue);
	MemoryContextSwitchTo(caller);
	if (result != NULL && result != value)
	{
		struct varlena *copy = palloc(VARSIZE_EXTERNAL(result));

		memcpy(copy, result, VARSIZE_EXTERNAL(result));
		result = copy;
	}
	MemoryContextDelete(work);
	return result;
}
