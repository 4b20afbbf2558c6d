/*-------------------------------------------------------------------------
 *
 * toaster.c
 *	  The jsonb toaster: the custom toaster callbacks of the core patch
 *	  series (access/toast_custom.h) for jsonb columns that opted in with
 *	  ALTER TABLE .. ALTER COLUMN .. SET (toaster = 'jsonb_toaster').
 *
 * When a row with an opted-in column is over TOAST's target size, core
 * offers the column's value here first.  A document that can be cut
 * (skeleton_build.c) becomes a custom TOAST pointer holding its skeleton;
 * its long values are written to the table's TOAST relation as ordinary
 * jsonb values, each under its own value id and compressed with the
 * column's method.  Before anything is written the skeleton is flattened
 * back from the parts in memory and compared with the document: a value
 * the toaster could not give back byte for byte is left to standard TOAST.
 *
 * Only this file knows the core hooks; it is compiled to nothing on a
 * server without them.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/toaster.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_compression.h"
#include "access/toast_custom.h"
#include "access/toast_internals.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "format/delta.h"
#include "format/flatten.h"
#include "format/pointer.h"
#include "format/skeleton_build.h"
#include "support/names.h"
#include "toast/part_fetch.h"
#include "toaster/part_cache.h"
#include "toaster/part_compress.h"
#include "toaster/sharing.h"
#include "toaster/toaster.h"

#define JT_DEFAULT_INLINE_BUDGET	2000
#define JT_DEFAULT_RANGE_SIZE		2048

/* settings */
static int	jt_inline_budget = JT_DEFAULT_INLINE_BUDGET;
static int	jt_range_size = JT_DEFAULT_RANGE_SIZE;

static struct varlena *jt_toast(Relation rel, int attnum,
								struct varlena *value,
								struct varlena *oldvalue, int32 budget,
								int options);
static struct varlena *jt_adopt(Relation rel, int attnum,
								struct varlena *value,
								struct varlena *oldvalue);
static struct varlena *adopt_listed(Relation rel, Form_pg_attribute att,
									struct varlena *value,
									struct varlena *oldvalue);
static void jt_delete(Relation rel, struct varlena *attr,
					  struct varlena *replacement, bool is_speculative);
static int	jt_get_parts(struct varlena *attr, varatt_external **parts);
static struct varlena *jt_reassemble(struct varlena *attr,
									 struct varlena **part_values);

static const CustomToasterRoutine jsonb_toaster_routine = {
	.toaster_name = JSONB_TOASTER_NAME,
	.detoast = jt_flatten_pointer,	/* part_cache.c */
	.detoast_slice = NULL,		/* core detoasts, then slices */
	.toast = jt_toast,
	.adopt = jt_adopt,
	.delete = jt_delete,
	.get_parts = jt_get_parts,
	.reassemble = jt_reassemble,
};

void
jt_toaster_init(void)
{
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".inline_budget",
							"Largest skeleton the jsonb toaster keeps in a heap row.",
							"The longest values of a document leave the row until "
							"the rest fits in this many bytes, or in the room "
							"TOAST leaves the column if that is less.",
							&jt_inline_budget, JT_DEFAULT_INLINE_BUDGET,
							0, MaxAllocSize / 2, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);
	DefineCustomIntVariable(JSONB_TOASTER_GUC_PREFIX ".range_size",
							"Size of the ranges wide arrays and objects are split into.",
							"A container larger than this that leaves the row is "
							"stored as several parts of about this size.",
							&jt_range_size, JT_DEFAULT_RANGE_SIZE,
							64, MaxAllocSize / 2, PGC_USERSET, GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	if (process_shared_preload_libraries_in_progress)
		RegisterCustomToaster(JSONB_TOASTER_ID, &jsonb_toaster_routine);
}

/* Part fetcher: the parts a build has planned, still in memory. */
static void
fetch_planned_parts(void *arg, uint32 first, uint32 n,
					const JtRefRange *ranges, Oid toastrelid,
					struct varlena **raws, bool *should_free)
{
	JtBuildResult *res = (JtBuildResult *) arg;

	if ((uint64) first + n > res->nparts)
		elog(ERROR, "skeleton refers to part %u of %u", first + n - 1,
			 res->nparts);
	for (uint32 i = 0; i < n; i++)
	{
		raws[i] = res->parts[first + i].raw;
		should_free[i] = false;
	}
}

/* Part fetcher: the parts logical decoding rebuilt from WAL. */
static void
fetch_decoded_parts(void *arg, uint32 first, uint32 n,
					const JtRefRange *ranges, Oid toastrelid,
					struct varlena **raws, bool *should_free)
{
	struct varlena **part_values = (struct varlena **) arg;

	for (uint32 i = 0; i < n; i++)
	{
		raws[i] = detoast_attr(part_values[first + i]);
		should_free[i] = (raws[i] != part_values[first + i]);
	}
}

/* Is the value rebuilt from the planned skeleton the document itself? */
static bool
skeleton_gives_back(JtBuildResult *res, const struct varlena *doc,
					Oid toastrelid)
{
	JtSkeleton	skel;
	JtPartFetcher fetcher;
	JtSkeletonHeader hdr;
	char	   *payload;
	struct varlena *flat;
	bool		same;

	hdr.toastrelid = toastrelid;
	hdr.nparts = res->nparts;
	hdr.tree_size = res->tree.len;
	payload = palloc(sizeof(hdr) + res->tree.len);
	memcpy(payload, &hdr, sizeof(hdr));
	memcpy(payload + sizeof(hdr), res->tree.data, res->tree.len);
	jt_skeleton_parse(&skel, payload, sizeof(hdr) + res->tree.len,
					  JT_SKELETON_VERSION_LATEST);
	fetcher.fetch = fetch_planned_parts;
	fetcher.decompress = NULL;
	fetcher.arg = res;
	flat = jt_skeleton_flatten(&skel, &fetcher);
	same = VARSIZE(flat) == VARSIZE(doc) &&
		memcmp(flat, doc, VARSIZE(doc)) == 0;
	pfree(flat);
	pfree(payload);
	return same;
}

/*
 * May the current role read the column of every row?  Which parts an
 * UPDATE shares with the old value depends on the old value's content, and
 * shows in what the UPDATE writes (its WAL, the TOAST relation's
 * statistics, its time): a role that may change the column but not read it
 * must not learn from a document it sends whether a part of it equals the
 * stored one.  Row security counts as not reading: an UPDATE that reads no
 * column is checked against the UPDATE policies only, so it can reach rows
 * the SELECT policies hide.
 */
static bool
may_read_column(Relation rel, AttrNumber attnum)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			userid = GetUserId();

	if (pg_class_aclcheck(relid, userid, ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) != ACLCHECK_OK)
		return false;
	return check_enable_rls(relid, InvalidOid, true) != RLS_ENABLED;
}

/* The compression method of a column's parts: its own, or the default. */
static char
column_compression(Form_pg_attribute att)
{
	return CompressionMethodIsValid(att->attcompression) ?
		att->attcompression : default_toast_compression;
}

/*
 * Write a part to the TOAST relation, compressed with the column's method
 * if compress.  A part that replaces another in an UPDATE is compressed only
 * if that one was: the edit was small enough to leave one part, and it
 * rarely makes content compress that did not, while pglz's attempt at a
 * part that does not compress took 8% of the backend's time in Y's
 * update (docs/toaster.md).
 */
static void
store_part(Relation rel, const struct varlena *raw, char cmethod,
		   bool compress, int options, varatt_external *ext)
{
	struct varlena *compressed = NULL;
	Datum		stored;

	if (compress)
		compressed = jt_compress_part(raw, cmethod);
	stored = toast_save_datum(rel, PointerGetDatum(compressed ? compressed : raw),
							  NULL, options);
	VARATT_EXTERNAL_GET_POINTER(*ext, DatumGetPointer(stored));
	pfree(DatumGetPointer(stored));
	if (compressed)
		pfree(compressed);
}

/*
 * The delta area of a patch that keeps the changed part's old stored part
 * as the base of a delta: the patch's own deltas (the other parts') and
 * the new one, as a datum (4-byte header).  NULL when the edit is too large
 * for a delta or the area for room.
 */
static struct varlena *
keep_as_delta(const JtPatch *patch, const char *deltas, uint32 deltas_len,
			  int64 room)
{
	StringInfoData literal;
	StringInfoData area;
	uint32		first;
	uint32		removed;

	initStringInfo(&literal);
	if (!jt_delta_make(patch->base, patch->base_entries, patch->part,
					   patch->part_entries, patch->same_head, patch->same_tail,
					   JT_DELTA_BUDGET((uint32) jt_range_size), &literal,
					   &first, &removed))
		return NULL;
	initStringInfo(&area);
	appendStringInfoSpaces(&area, VARHDRSZ);

	/*
	 * The new record first: an UPDATE that keeps the row on its page logs the
	 * new tuple from the first byte that differs to the last, and the records
	 * after the new one are the old tuple's tail.
	 */
	jt_delta_append(&area, &patch->base_range, first, removed, literal.data,
					literal.len);
	appendBinaryStringInfo(&area, deltas, deltas_len);
	if (area.len - VARHDRSZ > room)
		return NULL;
	SET_VARSIZE(area.data, area.len);
	return (struct varlena *) area.data;
}

/*
 * The pointer of a patch whose changed part is described by a record of
 * the delta area given (area_len bytes) against the part the old value
 * stores for it: the patched tree with the part's entry pointed at that
 * base, whose TOAST bytes, as the other parts', stay the old value's.
 */
static struct varlena *
pointer_at_base(const JtPatch *patch, const char *area, uint32 area_len,
				int32 rawsize)
{
	JtSkeletonHeader hdr;
	JtRefRange	range;
	char	   *payload;

	memcpy(&hdr, patch->payload, sizeof(hdr));
	payload = palloc(sizeof(hdr) + hdr.tree_size);
	memcpy(payload, patch->payload, sizeof(hdr) + hdr.tree_size);
	memcpy(&range, payload + patch->range_offset, sizeof(range));
	range.extinfo = patch->base_range.extinfo;
	range.valueid = patch->base_range.valueid;
	memcpy(payload + patch->range_offset, &range, sizeof(range));
	return jt_pointer_over(patch->old_pointer, &hdr,
						   payload + sizeof(JtSkeletonHeader), area, area_len,
						   rawsize);
}

/*
 * The last pointer jt_patch_pointer() returned that names exactly the
 * parts of the pointer it was made from (the changed part kept as a delta
 * of its old one, no part carried whole), and that pointer.  Offered the
 * two again, jt_adopt() and jt_delete() know without listing them that
 * the new one names the old one's parts.  Which parts a pointer names
 * depends on its bytes alone, so the pair stays true across statements
 * and transactions, and is kept (one inline budget's worth, twice) until
 * the next.  The old pointer's directory is then not checked again as
 * listing it would (a delta naming none of its parts, a wrong count):
 * reads, a DELETE or the next rebuild of the value report such damage.
 */
static MemoryContext same_parts_cxt = NULL;
static struct varlena *same_parts_new = NULL;
static struct varlena *same_parts_old = NULL;

static void
remember_same_parts(const struct varlena *newptr, const struct varlena *oldptr)
{
	struct varlena *newcopy;
	struct varlena *oldcopy;

	if (same_parts_cxt == NULL)
		same_parts_cxt = AllocSetContextCreate(TopMemoryContext,
											   "jsonb_toaster patched pointer",
											   ALLOCSET_DEFAULT_SIZES);

	/*
	 * Forgotten first, set once both copies exist: should an allocation fail,
	 * nothing stale or half made is left.
	 */
	same_parts_new = same_parts_old = NULL;
	MemoryContextReset(same_parts_cxt);
	newcopy = MemoryContextAlloc(same_parts_cxt, VARSIZE_EXTERNAL(newptr));
	oldcopy = MemoryContextAlloc(same_parts_cxt, VARSIZE_EXTERNAL(oldptr));
	memcpy(newcopy, newptr, VARSIZE_EXTERNAL(newptr));
	memcpy(oldcopy, oldptr, VARSIZE_EXTERNAL(oldptr));
	same_parts_new = newcopy;
	same_parts_old = oldcopy;
}

/*
 * A pointer to payload (JtSkeletonHeader, tree, delta area): the skeleton
 * of old_pointer with its tree changed in place, flattening to rawsize
 * bytes.  NULL if it does not fit the row's budget.  When every part and
 * delta is kept (same_parts), it names the old pointer's parts, like a
 * patch that keeps its changed part as a delta, and jt_adopt() and
 * jt_delete() are told so; otherwise the tree dropped parts that take
 * dropped_stored bytes, and the two list what the new pointer keeps.
 */
struct varlena *
jt_tree_patch_pointer(const char *payload, uint32 payload_len,
					  const struct varlena *old_pointer, int32 rawsize,
					  uint64 dropped_stored, bool same_parts)
{
	JtSkeletonHeader hdr;
	struct varlena *result;

	memcpy(&hdr, payload, sizeof(hdr));
	if (!jt_patch_may_be_taken(payload_len - sizeof(hdr), 0, 0))
		return NULL;
	result = jt_pointer_over_fewer(old_pointer, &hdr, payload + sizeof(hdr),
								   payload + sizeof(hdr) + hdr.tree_size,
								   payload_len - sizeof(hdr) - hdr.tree_size,
								   rawsize, dropped_stored);
	if (same_parts)
		remember_same_parts(result, old_pointer);
	return result;
}

static bool
names_same_parts(const struct varlena *newptr, const struct varlena *oldptr)
{
	return same_parts_new != NULL && newptr != NULL && oldptr != NULL &&
		VARATT_IS_EXTERNAL_CUSTOM(newptr) && VARATT_IS_EXTERNAL_CUSTOM(oldptr) &&
		VARSIZE_EXTERNAL(newptr) == VARSIZE_EXTERNAL(same_parts_new) &&
		VARSIZE_EXTERNAL(oldptr) == VARSIZE_EXTERNAL(same_parts_old) &&
		memcmp(newptr, same_parts_new, VARSIZE_EXTERNAL(newptr)) == 0 &&
		memcmp(oldptr, same_parts_old, VARSIZE_EXTERNAL(oldptr)) == 0;
}

/*
 * Has a changed part outgrown its range?  It may grow up to the largest
 * range the general path cuts, or to the largest part of its reference,
 * if more: the builder enlarges the ranges of a document whose directory
 * would not fit the row, and an element appended to the last of such
 * parts (often the smallest) need not send the document to the general
 * path.  No part grows past the largest, so the bound never rises.
 */
static bool
part_outgrown(uint32 part_size, uint32 largest_sibling)
{
	return part_size > Max((uint64) largest_sibling,
						   JT_RANGE_MAX(jt_range_size) + VARHDRSZ);
}

/*
 * Could a patch be returned as a pointer (jt_patch_pointer(),
 * jt_tree_patch_pointer())?  skeleton_size is the patched tree's and delta
 * area's, part_size the changed part's raw size (0 when only the tree
 * changed) and largest_sibling the largest raw size of its reference's
 * parts, as stored.  partial_update*.c ask so as to keep copies of the
 * other parts only for the general path that follows a refusal: a wrong
 * guess costs time, never correctness.
 */
bool
jt_patch_may_be_taken(uint32 skeleton_size, uint32 part_size,
					  uint32 largest_sibling)
{
	if (skeleton_size > (uint32) Max(jt_inline_budget, 0))
		return false;
	return part_size == 0 || !part_outgrown(part_size, largest_sibling);
}

/*
 * The pointer of a patch whose changed part is kept as a delta of what the
 * old value stores for it (patch->base), for a document of rawsize bytes:
 * NULL when the edit is too large for a delta or the skeleton and its
 * delta area would take more than target bytes.
 */
static struct varlena *
patch_as_delta(const JtPatch *patch, int32 rawsize, int32 target)
{
	JtSkeletonHeader hdr;
	struct varlena *delta;

	memcpy(&hdr, patch->payload, sizeof(hdr));
	/* parts carried whole are written when adopted: they take no room */
	delta = keep_as_delta(patch, patch->payload + sizeof(hdr) + hdr.tree_size,
						  patch->payload_len - sizeof(hdr) - hdr.tree_size,
						  (int64) target - hdr.tree_size + patch->carried_len);
	if (delta == NULL)
		return NULL;
	return pointer_at_base(patch, VARDATA(delta), VARSIZE(delta) - VARHDRSZ,
						   rawsize);
}

/*
 * The pointer of a patch whose changed part changed too much to be kept as
 * a delta: the new part goes whole into the delta area, as a replacement
 * record of the old (delta.h), for jt_adopt() to write.  NULL when the
 * pointer jt_adopt() would store, the skeleton and the other parts'
 * deltas, would take more than target bytes.
 */
static struct varlena *
patch_as_replacement(const JtPatch *patch, int32 rawsize, int32 target)
{
	JtSkeletonHeader hdr;
	uint32		deltas_len;
	StringInfoData area;

	memcpy(&hdr, patch->payload, sizeof(hdr));
	deltas_len = patch->payload_len - sizeof(hdr) - hdr.tree_size;
	if ((int64) hdr.tree_size + deltas_len - patch->carried_len > target)
		return NULL;

	initStringInfo(&area);
	appendBinaryStringInfo(&area, patch->payload + sizeof(hdr) + hdr.tree_size,
						   deltas_len);
	jt_delta_append(&area, &patch->base_range, 0,
					patch->base_range.header & JT_CONTAINER_COUNT_MASK,
					VARDATA(patch->part), VARSIZE(patch->part) - VARHDRSZ);
	/* until jt_adopt() writes the part, the old one stays referred to */
	return pointer_at_base(patch, area.data, area.len, rawsize);
}

/*
 * The pointer jsonb_set() and the like return in place of the document
 * when their patch changed one part, of a document of rawsize bytes: what
 * jt_adopt() stores in the row without flattening anything.  The changed
 * part is kept as a delta, or else carried whole for jt_adopt() to write.
 * NULL when the part has outgrown its range or the pointer would not fit
 * the row (whose budget is not known here: jsonb_toaster.inline_budget
 * stands for it); the document then goes to the general path, which
 * shares the other parts with the old value.  *whole tells which.
 */
struct varlena *
jt_patch_pointer(const JtPatch *patch, int32 rawsize, bool *whole)
{
	JtRefRange	oldrange;
	struct varlena *result;

	*whole = false;
	if (patch->part == NULL || patch->base == NULL)
		return NULL;
	memcpy(&oldrange, VARDATA_CUSTOM(patch->old_pointer) + patch->range_offset,
		   sizeof(oldrange));
	if (part_outgrown(VARSIZE(patch->part),
					  Max((uint32) oldrange.rawsize, patch->largest_sibling)))
		return NULL;
	result = patch_as_delta(patch, rawsize, Max(jt_inline_budget, 0));
	if (result != NULL)
	{
		if (patch->carried_len == 0)
			remember_same_parts(result, patch->old_pointer);
		return result;
	}
	result = patch_as_replacement(patch, rawsize, Max(jt_inline_budget, 0));
	*whole = result != NULL;
	return result;
}

/*
 * Cut the document, check that it flattens back exactly, write its parts
 * and return the pointer; NULL to leave the value to standard TOAST.
 */
static struct varlena *
build_and_store(Relation rel, Form_pg_attribute att, struct varlena *value,
				struct varlena *oldvalue, int32 budget, int options)
{
	Oid			toastrelid = CustomToastPointerRelid(rel);
	char		cmethod = column_compression(att);
	struct varlena *doc;
	JtBuildResult res;
	int32		target;
	uint64		stored_outside = 0;
	JtSkeletonHeader hdr;
	JtOldParts *old;
	JtRefRange *planned = NULL;
	StringInfoData deltas;
	StringInfoData literal;
	uint32		nkept = 0;
	uint32		ndeltas = 0;

	target = Max(Min(budget, jt_inline_budget), 0);

	doc = detoast_attr(value);
	if (!jt_build_skeleton(doc, target, (uint32) jt_range_size, &res))
		return NULL;
	if (!skeleton_gives_back(&res, doc, toastrelid))
	{
		/*
		 * Never store what would not read back exactly.  This is a bug in the
		 * layout writer, so it is loud; the value is not lost.
		 */
		ereport(WARNING,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("jsonb_toaster left a value of column \"%s\" of table \"%s\" to standard TOAST",
						NameStr(att->attname), RelationGetRelationName(rel)),
				 errdetail("Rebuilding the value from its skeleton would not give back the same bytes."),
				 errhint("Please report this as a bug of jsonb_toaster.")));
		return NULL;
	}

	old = NULL;
	if (oldvalue != NULL && VARATT_IS_EXTERNAL_CUSTOM(oldvalue) &&
		may_read_column(rel, att->attnum))
		old = jt_old_parts_open(rel, oldvalue);
	if (old != NULL)
	{
		/* the new parts' directory entries, read ahead against the old */
		planned = palloc(res.nparts * sizeof(JtRefRange));
		for (uint32 i = 0; i < res.nparts; i++)
		{
			memcpy(&planned[i], res.tree.data + res.parts[i].range_offset,
				   sizeof(JtRefRange));
			/* looked up by the hash the old value's format takes */
			jt_old_parts_rehash(old, res.parts[i].raw, &planned[i].hash);
		}
		jt_old_parts_prefetch(old, planned, res.nparts);
	}
	initStringInfo(&deltas);
	initStringInfo(&literal);
	for (uint32 i = 0; i < res.nparts; i++)
	{
		struct varlena *raw = res.parts[i].raw;
		varatt_external ext;
		JtRefRange	base;
		uint32		first;
		uint32		removed;
		int64		room;

		/* a part the old value has already: take it over */
		if (old != NULL &&
			jt_old_parts_take(old, &planned[i], raw, &ext.va_extinfo,
							  &ext.va_valueid))
		{
			jt_build_set_stored(&res, i, ext.va_extinfo, ext.va_valueid);
			stored_outside += VARATT_EXTERNAL_GET_EXTSIZE(ext);
			nkept++;
			continue;
		}

		/* a small edit of an old part, if the row has room for it */
		room = (int64) target - res.tree.len - deltas.len -
			(int64) sizeof(JtDeltaHeader) - (sizeof(uint32) - 1);
		if (old != NULL && room > 0 &&
			jt_old_parts_take_as_delta(old, raw,
									   (uint32) Min(JT_DELTA_BUDGET((int64) jt_range_size),
													room),
									   &literal, &first, &removed, &base))
		{
			jt_delta_append(&deltas, &base, first, removed, literal.data,
							literal.len);
			jt_build_set_stored(&res, i, base.extinfo, base.valueid);
			stored_outside += base.extinfo & VARLENA_EXTSIZE_MASK;
			ndeltas++;
			continue;
		}

		store_part(rel, raw, cmethod, true, options, &ext);
		jt_build_set_stored(&res, i, ext.va_extinfo, ext.va_valueid);
		stored_outside += VARATT_EXTERNAL_GET_EXTSIZE(ext);
	}

	if (old != NULL)
		elog(DEBUG1, "jsonb_toaster: stored a new document of %u parts: %u kept, %u kept as deltas, %u written",
			 res.nparts, nkept, ndeltas, res.nparts - nkept - ndeltas);
	hdr.toastrelid = toastrelid;
	hdr.nparts = res.nparts;
	hdr.tree_size = res.tree.len;
	return jt_make_pointer(&hdr, res.tree.data, deltas.data, deltas.len,
						   VARSIZE(doc), stored_outside,
						   JT_SKELETON_VERSION_LATEST);
}

static struct varlena *
jt_toast(Relation rel, int attnum, struct varlena *value,
		 struct varlena *oldvalue, int32 budget, int options)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	struct varlena *result;

	/* the option is accepted on any varlena column; only jsonb is ours */
	if (att->atttypid != JSONBOID || !OidIsValid(rel->rd_rel->reltoastrelid))
		return NULL;

	/*
	 * Only in databases where the extension is installed: there, DROP
	 * EXTENSION checks that no column uses the toaster any more.
	 */
	if (!OidIsValid(get_extension_oid(JSONB_TOASTER_NAME, true)))
		return NULL;

	/* the plan and the parts' copies go once the pointer is made */
	work = AllocSetContextCreate(caller, "jsonb_toaster toast",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);
	result = build_and_store(rel, att, value, oldvalue, budget, options);
	MemoryContextSwitchTo(caller);
	if (result)
	{
		struct varlena *copy = palloc(VARSIZE_EXTERNAL(result));

		memcpy(copy, result, VARSIZE_EXTERNAL(result));
		result = copy;
	}
	MemoryContextDelete(work);
	return result;
}

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

			if (d->hdr.valueid != ref->ranges[r].valueid ||
				!jt_delta_is_replacement(d))
				continue;
			offset = (uint64) (ref->refdata - rr->payload) +
				sizeof(JtRefHeader) + (uint64) r * sizeof(JtRefRange);
			if (ref->refdata < rr->payload ||
				offset + sizeof(JtRefRange) > rr->payload_len)
				elog(ERROR, "jsonb_toaster: a reference lies outside its pointer");
			rr->offsets[i] = (uint32) offset;
			rr->matches[i]++;
		}
}

/*
 * The pointer to store for value, whose replacement records (delta.h)
 * carry the parts they stand for, at offsets[i] for record i: each such
 * part written now, its directory entry pointed at it, the record
 * dropped.  The base each replaced stays the old row version's, which
 * deletes it.
 */
static struct varlena *
write_replaced_parts(Relation rel, Form_pg_attribute att, struct varlena *value,
					 const JtSkeleton *skel, const uint32 *offsets)
{
	varatt_custom header;
	JtSkeletonHeader hdr;
	char	   *payload;
	uint64		stored_outside;
	StringInfoData deltas;
	char		cmethod = column_compression(att);

	VARATT_CUSTOM_GET_HEADER(header, value);
	stored_outside = header.va_storedsize - header.va_size;
	memcpy(&hdr, VARDATA_CUSTOM(value), sizeof(hdr));
	payload = palloc(sizeof(hdr) + hdr.tree_size);
	memcpy(payload, VARDATA_CUSTOM(value), sizeof(hdr) + hdr.tree_size);

	for (uint32 i = 0; i < skel->ndeltas; i++)
	{
		const JtDelta *d = &skel->deltas[i];
		JtRefRange	range;
		JtRefRange	stored;
		struct varlena *part;
		varatt_external ext;

		if (!jt_delta_is_replacement(d))
			continue;
		part = palloc(VARHDRSZ + d->hdr.literal_len);
		SET_VARSIZE(part, VARHDRSZ + d->hdr.literal_len);
		memcpy(VARDATA(part), d->literal, d->hdr.literal_len);
		memcpy(&range, payload + offsets[i], sizeof(range));
		stored = jt_stored_range(skel, &range);
		/* an UPDATE, whose TOAST writes take no options */
		store_part(rel, part, cmethod, jt_stored_compressed(&stored), 0, &ext);
		pfree(part);
		elog(DEBUG1, "jsonb_toaster: wrote the part jsonb_set() or the like carried whole");

		stored_outside -= range.extinfo & VARLENA_EXTSIZE_MASK;
		stored_outside += VARATT_EXTERNAL_GET_EXTSIZE(ext);
		range.extinfo = ext.va_extinfo;
		range.valueid = ext.va_valueid;
		memcpy(payload + offsets[i], &range, sizeof(range));
	}
	initStringInfo(&deltas);
	jt_delta_area_copy(skel, InvalidOid, false, &deltas);
	return jt_make_pointer(&hdr, payload + sizeof(hdr), deltas.data, deltas.len,
						   header.va_rawsize, stored_outside,
						   jt_patched_version(value));
}

/*
 * May a pointer of size bytes take the place of oldvalue in a row of rel?
 * Not if larger than oldvalue and than TOAST's target for a whole row
 * (the table's toast_tuple_target; the budget of the row is not known
 * here).
 */
static bool
fits_in_place(Relation rel, uint64 size, struct varlena *oldvalue)
{
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

	jt_parse_pointer(value, &skel);
	for (uint32 i = 0; i < skel.ndeltas; i++)
		if (jt_delta_is_replacement(&skel.deltas[i]))
		{
			nreplaced++;
			size -= jt_delta_record_size(&skel.deltas[i]);
		}
	if (!fits_in_place(rel, size, oldvalue))
		return NULL;
	if (nreplaced == 0)
		return value;

	/* the directory entries lie in the tree, which the payload starts with */
	rr.skel = &skel;
	rr.payload = VARDATA_CUSTOM(value);
	rr.payload_len = sizeof(JtSkeletonHeader) + skel.hdr.tree_size;
	rr.offsets = palloc0(skel.ndeltas * sizeof(uint32));
	rr.matches = palloc0(skel.ndeltas * sizeof(uint32));
	jt_skeleton_walk(&skel, find_replaced_ranges, &rr);
	for (uint32 i = 0; i < skel.ndeltas; i++)
	{
		const JtDelta *d = &skel.deltas[i];
		JtRefRange	range;

		if (!jt_delta_is_replacement(d))
			continue;
		/* one entry, or the pointer is damaged: leave it to be read back */
		if (rr.matches[i] != 1)
			return NULL;
		memcpy(&range, rr.payload + rr.offsets[i], sizeof(range));
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
static struct varlena *
jt_adopt(Relation rel, int attnum, struct varlena *value,
		 struct varlena *oldvalue)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	Oid			toastrelid = CustomToastPointerRelid(rel);
	struct varlena *result = NULL;

	/* core offers none in logically logged tables: no sharing there */
	if (att->atttypid != JSONBOID || !OidIsValid(toastrelid) ||
		RelationIsLogicallyLogged(rel) ||
		custom_toaster_id(value) != JSONB_TOASTER_ID ||
		custom_toaster_id(oldvalue) != JSONB_TOASTER_ID)
		return NULL;

	if (names_same_parts(value, oldvalue))
	{
		/*
		 * Made by jt_patch_pointer() from oldvalue: it names oldvalue's parts
		 * and carries none whole, so it is stored as it is if it fits.
		 */
		if (jt_pointer_toastrelid(value) == toastrelid &&
			fits_in_place(rel, VARSIZE_EXTERNAL(value), oldvalue))
			result = value;
	}
	else
		result = adopt_listed(rel, att, value, oldvalue);
	if (result != NULL)
		elog(DEBUG1, "jsonb_toaster: stored the pointer jsonb_set() or the like returned");
	return result;
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
	JtRefRange *ranges;
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

static void
jt_delete(Relation rel, struct varlena *attr, struct varlena *replacement,
		  bool is_speculative)
{
	JtRefRange *ranges;
	JtKeptParts *kept;
	Oid			toastrelid;
	uint32		n;
	MemoryContext work;
	MemoryContext caller;

	/*
	 * The same pointer is kept in the new row version, or one that names the
	 * same parts: it owns them
	 */
	if (replacement != NULL && VARATT_IS_EXTERNAL_CUSTOM(replacement) &&
		VARSIZE_EXTERNAL(replacement) == VARSIZE_EXTERNAL(attr) &&
		memcmp(replacement, attr, VARSIZE_EXTERNAL(attr)) == 0)
		return;
	if (names_same_parts(replacement, attr))
		return;

	/* once per row: what is allocated here goes when it is done */
	work = AllocSetContextCreate(CurrentMemoryContext, "jsonb_toaster delete",
								 ALLOCSET_SMALL_SIZES);
	caller = MemoryContextSwitchTo(work);
	n = jt_pointer_parts(attr, &toastrelid, &ranges);
	kept = jt_kept_parts(replacement, toastrelid);
	for (uint32 i = 0; i < n; i++)
	{
		struct varlena *ptr;

		/* the new row version took this part over */
		if (jt_part_is_kept(kept, ranges[i].valueid))
			continue;
		ptr = jt_part_pointer(&ranges[i], toastrelid);
		toast_delete_datum(rel, PointerGetDatum(ptr), is_speculative);
		pfree(ptr);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(work);
}

/*
 * Core calls this once a tuple in contexts that live as long as a table
 * rewrite or a decoding session: only the array it is given back may stay
 * in the caller's context.
 */
static int
jt_get_parts(struct varlena *attr, varatt_external **parts)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	JtSkeleton	skel;
	JtRefRange *ranges;
	varatt_external *result;
	uint32		n;

	work = AllocSetContextCreate(caller, "jsonb_toaster get_parts",
								 ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(work);
	jt_parse_pointer(attr, &skel);
	n = jt_skeleton_list_parts(&skel, &ranges);
	result = MemoryContextAlloc(caller, Max(n, 1) * sizeof(varatt_external));
	for (uint32 i = 0; i < n; i++)
	{
		result[i].va_rawsize = ranges[i].rawsize;
		result[i].va_extinfo = ranges[i].extinfo;
		result[i].va_valueid = ranges[i].valueid;
		result[i].va_toastrelid = skel.hdr.toastrelid;
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(work);
	*parts = result;
	return (int) n;
}

static struct varlena *
jt_reassemble(struct varlena *attr, struct varlena **part_values)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	JtSkeleton	skel;
	JtPartFetcher fetcher;
	struct varlena *flat;
	struct varlena *result;

	/* as jt_get_parts(): called once a tuple in a long-lived context */
	work = AllocSetContextCreate(caller, "jsonb_toaster reassemble",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);
	jt_parse_pointer(attr, &skel);
	fetcher.fetch = fetch_decoded_parts;
	fetcher.decompress = NULL;
	fetcher.arg = part_values;
	flat = jt_skeleton_flatten(&skel, &fetcher);
	result = MemoryContextAlloc(caller, VARSIZE(flat));
	memcpy(result, flat, VARSIZE(flat));
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(work);
	return result;
}
