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
 * jsonb values compressed with the column's method, the parts one call
 * writes packed into one TOAST value (format.h).  Before anything is written the skeleton is flattened
 * back from the parts in memory and compared with the document: a value
 * the toaster could not give back byte for byte is left to standard TOAST.
 *
 * This file registers the toaster and holds its toast, delete, get_parts
 * and reassemble callbacks; adopt is in adopt.c, detoast in part_cache.c.
 * The Makefile builds the folder only against a server with the hooks.
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
#include "utils/snapmgr.h"
#include "utils/rls.h"

#include "format/delta.h"
#include "format/flatten.h"
#include "format/pointer.h"
#include "format/skeleton_build.h"
#include "support/names.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"
#include "toast/value_delete.h"
#include "toaster/adopt.h"
#include "toaster/logical_log.h"
#include "toaster/part_cache.h"
#include "toaster/part_write.h"
#include "toaster/settings.h"
#include "toaster/shared_stream.h"
#include "toaster/sharing.h"
#include "toaster/toaster.h"
#include "toaster/tree_outside.h"

static struct varlena *jt_toast(Relation rel, int attnum,
								struct varlena *value,
								struct varlena *oldvalue, int32 budget,
								int options);
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
	.validate_options = jt_validate_options,	/* settings.c */
#ifdef CUSTOM_TOASTER_HAS_LOGS_SHARED_PARTS
	.logs_shared_parts = true,	/* logical_log.c */
#endif
};

void
jt_toaster_init(void)
{
	jt_toaster_settings_init();

	if (process_shared_preload_libraries_in_progress)
		RegisterCustomToaster(JSONB_TOASTER_ID, &jsonb_toaster_routine);
	jt_logical_log_init();
}

/* Part fetcher: the parts a build has planned, still in memory. */
static void
fetch_planned_parts(void *arg, uint32 first, uint32 n,
					const JtPartEntry *ranges, Oid toastrelid,
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

/*
 * The TOAST values logical decoding rebuilt from WAL: those get_parts
 * listed, given to reassemble, then those asked of core since (the parts
 * an outside tree names, which get_parts cannot list in decoding).
 */
typedef struct DecodedValues
{
	const JtPartEntry *listed;	/* get_parts' values, by value id */
	struct varlena **listed_contents;	/* each value's bytes, as core rebuilt
										 * it */
	uint32		nlisted;
	JtPartEntry *asked;			/* values asked of core, by value id */
	struct varlena **asked_contents;
	uint32		nasked;
	uint32		maxasked;
	Oid			toastrelid;
	JtUnitCache units;			/* the unit cut from last */
	JtSharedStream *shared;		/* the shared parts, if logged as a stream */
} DecodedValues;

/* The content of the value range lies in, as the decoded transaction has it */
static struct varlena *
decoded_value(DecodedValues *decoded, const JtPartEntry *range)
{
	const JtPartEntry *found;
	varatt_external ext;
	struct varlena *content;
	uint32		lo;
	uint32		hi;

	found = bsearch(range, decoded->listed, decoded->nlisted,
					sizeof(JtPartEntry), jt_entry_value_cmp);
	if (found != NULL)
		return decoded->listed_contents[found - decoded->listed];
	/* asked is kept in value id order: where range's value is, or goes */
	lo = 0;
	hi = decoded->nasked;
	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;
		int			cmp = jt_entry_value_cmp(range, &decoded->asked[mid]);

		if (cmp == 0)
			return decoded->asked_contents[mid];
		if (cmp < 0)
			hi = mid;
		else
			lo = mid + 1;
	}

	jt_value_pointer(range, decoded->toastrelid, &ext);
	content = ReorderBufferCustomToastPart(&ext);
	if (content == NULL)
		elog(ERROR, "jsonb_toaster: part in toast value %u not decoded",
			 range->valueid);
	if (decoded->nasked == decoded->maxasked)
	{
		decoded->maxasked = Max(8, decoded->maxasked * 2);
		decoded->asked = repalloc_array(decoded->asked, JtPartEntry,
										decoded->maxasked);
		decoded->asked_contents = repalloc_array(decoded->asked_contents,
												 struct varlena *,
												 decoded->maxasked);
	}
	memmove(&decoded->asked[lo + 1], &decoded->asked[lo],
			(decoded->nasked - lo) * sizeof(JtPartEntry));
	memmove(&decoded->asked_contents[lo + 1], &decoded->asked_contents[lo],
			(decoded->nasked - lo) * sizeof(struct varlena *));
	decoded->asked[lo] = *range;
	decoded->asked_contents[lo] = content;
	decoded->nasked++;
	return content;
}

/*
 * The stream of shared parts logged with a pointer whose tree lies outside
 * the row in a value of its own, written anew: in one of the values the
 * tree names, if anywhere.
 */
static JtSharedStream *
find_stream_under_tree(JtSkeleton *skel, DecodedValues *decoded)
{
	JtPartEntry *values;
	uint32		n;
	struct varlena **contents;

	n = jt_skeleton_list_parts(skel, &values);
	n = jt_distinct_values(values, n);
	contents = palloc(Max(n, 1) * sizeof(struct varlena *));
	for (uint32 i = 0; i < n; i++)
		contents[i] = decoded_value(decoded, &values[i]);
	return jt_shared_stream_find(values, contents, n, skel->hdr.toastrelid,
								 false);
}

/* Part fetcher: parts cut from the values logical decoding rebuilt. */
static void
fetch_decoded_parts(void *arg, uint32 first, uint32 n,
					const JtPartEntry *ranges, Oid toastrelid,
					struct varlena **raws, bool *should_free)
{
	DecodedValues *decoded = (DecodedValues *) arg;

	for (uint32 i = 0; i < n; i++)
	{
		const JtPartEntry *range = &ranges[i];
		struct varlena *value;

		if (decoded->shared != NULL &&
			jt_shared_stream_holds(decoded->shared, range->valueid))
		{
			raws[i] = jt_shared_stream_part(decoded->shared, range,
											toastrelid);
			should_free[i] = true;
			continue;
		}
		value = decoded_value(decoded, range);
		raws[i] = jt_part_from_value(range, value, toastrelid,
									 &decoded->units, &should_free[i]);
	}
}

/* Is the value rebuilt from the planned skeleton the document itself? */
static bool
skeleton_gives_back(JtBuildResult *res, const struct varlena *doc,
					Oid toastrelid)
{
	JtSkeleton	skel;
	JtPartFetcher fetcher;
	char	   *payload;
	uint32		payload_len;
	struct varlena *flat;
	bool		same;

	payload = jt_build_payload(res, toastrelid, &payload_len);
	jt_skeleton_parse(&skel, payload, payload_len, res->version);
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

/*
 * The most a method compresses: pglz's longest match, 273 bytes, takes a
 * 3-byte tag and a control bit; lz4's adds 255 bytes a length byte.
 * Parts of a document whose raw bytes are more than this many times the
 * room in the row are not tried inline: no compression gets them there.
 * Standard TOAST compresses every value it moves, and keeps in the row
 * those that then fit: a document of zeros may be 80 times its room.
 */
#define JT_PGLZ_MAX_RATIO		88
#define JT_LZ4_MAX_RATIO		255

static inline uint64
inline_max_raw(char cmethod, int32 target)
{
	return (uint64) target *
		(cmethod == TOAST_LZ4_COMPRESSION ? JT_LZ4_MAX_RATIO : JT_PGLZ_MAX_RATIO);
}

/*
 * Could total raw bytes, of which res's parts are all or most, compressed
 * together with cmethod, fit in room bytes?  Guessed from the largest part
 * compressed alone (joint compression does no worse in general), with a
 * margin: a document that clearly does not fit is not compressed whole for
 * nothing, which would cost about as much again as compressing its parts.
 * The largest part compressed is kept in *sample, for what stores it next
 * (it is often the document's only part).
 */
static bool
may_fit_inline(const JtBuildResult *res, uint64 total, char cmethod,
			   uint64 room, JtCompressedPart *sample)
{
	const struct varlena *largest = NULL;
	uint64		sample_size;

	for (uint32 i = 0; i < res->nparts; i++)
		if (largest == NULL || VARSIZE(res->parts[i].raw) > VARSIZE(largest))
			largest = res->parts[i].raw;
	if (largest == NULL || total <= room)
		return true;
	sample->raw = largest;
	sample->cmethod = cmethod;
	sample->compressed = jt_compress_part(largest, cmethod);
	sample_size = sample->compressed ? VARSIZE(sample->compressed) :
		VARSIZE(largest);
	/* total * sample_size / raw size, against room and a quarter more */
	return total * sample_size <= (room + room / 4) * VARSIZE(largest);
}

/*
 * Is oldvalue one of our pointers whose parts take more than twice room
 * bytes of TOAST?
 */
static bool
parts_took_far_more(struct varlena *oldvalue, int32 room)
{
	varatt_custom header;

	if (oldvalue == NULL || !VARATT_IS_EXTERNAL_CUSTOM(oldvalue) ||
		custom_toaster_id(oldvalue) != JSONB_TOASTER_ID)
		return false;
	VARATT_CUSTOM_GET_HEADER(header, oldvalue);
	return header.va_storedsize > header.va_size &&
		header.va_storedsize - header.va_size > 2 * (uint64) Max(room, 0);
}

/*
 * A datum of prefix_len bytes of prefix (if any) followed by res's parts,
 * compressed with cmethod if that makes it smaller.  A lone part that
 * sample holds compressed is not compressed again.
 */
static struct varlena *
inline_datum(const JtBuildResult *res, const char *prefix, uint32 prefix_len,
			 uint64 total, char cmethod, const JtCompressedPart *sample)
{
	struct varlena *raw;
	struct varlena *compressed;
	uint64		at = prefix_len;

	if (prefix_len == 0 && res->nparts == 1 &&
		sample->raw == res->parts[0].raw && sample->cmethod == cmethod)
	{
		const struct varlena *same = sample->compressed ? sample->compressed :
			sample->raw;

		compressed = palloc(VARSIZE(same));
		memcpy(compressed, same, VARSIZE(same));
		return compressed;
	}
	raw = palloc(prefix_len + total + VARHDRSZ);
	SET_VARSIZE(raw, prefix_len + total + VARHDRSZ);
	if (prefix_len > 0)
		memcpy(VARDATA(raw), prefix, prefix_len);
	for (uint32 i = 0; i < res->nparts; i++)
	{
		uint32		len = VARSIZE(res->parts[i].raw) - VARHDRSZ;

		memcpy(VARDATA(raw) + at, VARDATA(res->parts[i].raw), len);
		at += len;
	}
	compressed = jt_compress_part(raw, cmethod);
	if (compressed == NULL)
		return raw;
	pfree(raw);
	return compressed;
}

/*
 * The format version of a pointer to res: 8 at least for a tree holding
 * references below an opened value, which readers of earlier versions do
 * not expect; otherwise the version res was planned in.
 */
static uint8
pointer_version(const JtBuildResult *res)
{
	if (res->opened)
		return (uint8) Max(res->version, JT_SKELETON_VERSION_FOLDED);
	return (uint8) res->version;
}

/*
 * An inline skeleton (format.h) of the skeleton res planned for doc, if it
 * fits in target bytes: its parts one datum compressed with cmethod, in the
 * pointer.  If it does not, and may_fold, a folded one: the tree
 * compressed with the parts.  NULL if neither fits; res is then as it was.
 */
static struct varlena *
try_inline(JtBuildResult *res, const struct varlena *doc, char cmethod,
		   int32 target, Oid toastrelid, bool may_fold,
		   const JtCompressedPart *sample)
{
	uint64		total = 0;
	uint64		at = 0;
	uint64		header = sizeof(JtSkeletonHeader);
	struct varlena *stored = NULL;
	char	   *tree_before;
	JtSkeletonInfo hdr = {0};

	for (uint32 i = 0; i < res->nparts; i++)
		total += VARSIZE(res->parts[i].raw) - VARHDRSZ;

	/* the tree as it is in the row, the parts compressed after it */
	if (header + res->tree.len + VARHDRSZ <= (uint64) target)
	{
		stored = inline_datum(res, NULL, 0, total, cmethod, sample);
		if (header + res->tree.len + VARSIZE(stored) > (uint64) target)
		{
			/*
			 * Folding adds the tree to what did not fit, unless the parts did
			 * not compress alone: the tree before them may make them.
			 */
			if (VARATT_IS_COMPRESSED(stored) &&
				header + VARSIZE(stored) > (uint64) target)
				may_fold = false;
			pfree(stored);
			stored = NULL;
		}
	}
	if (stored == NULL && !may_fold)
		return NULL;

	/* entries naming the parts in the datum, after the tree if folded */
	tree_before = palloc(res->tree.len);
	memcpy(tree_before, res->tree.data, res->tree.len);
	for (uint32 i = 0; i < res->nparts; i++)
	{
		JtPartEntry entry = {0};
		uint32		len = VARSIZE(res->parts[i].raw) - VARHDRSZ;

		entry.valueid = InvalidOid;
		entry.extinfo = len;
		entry.offset = (uint32) at;
		entry.value_size = (uint32) total;
		jt_build_set_stored(res, i, &entry);
		at += len;
	}
	hdr.toastrelid = toastrelid;
	hdr.nparts = res->nparts;
	hdr.tree_size = res->tree.len;
	hdr.inline_parts = true;
	if (stored != NULL)
		return jt_make_pointer(&hdr, res->tree.data, (const char *) stored,
							   VARSIZE(stored), VARSIZE(doc), 0,
							   pointer_version(res));

	stored = inline_datum(res, res->tree.data, res->tree.len, total, cmethod,
						  sample);
	if (VARATT_IS_COMPRESSED(stored) &&
		header + VARSIZE(stored) <= (uint64) target)
	{
		hdr.tree_folded = true;
		return jt_make_pointer_folded(&hdr, stored, VARSIZE(doc));
	}
	memcpy(res->tree.data, tree_before, res->tree.len);
	return NULL;
}

/*
 * A pointer that keeps doc in the row (an inline skeleton, maybe folded),
 * if doc is small enough once compressed with cmethod to fit in target
 * bytes; res is the skeleton planned for TOAST.  Stock keeps such a
 * document in the row compressed; stored as a skeleton, it would take a
 * TOAST value besides.  A document stock keeps there whose short fields
 * take much of the row is folded, so that it still stays there.  *tried
 * says whether doc looked close enough to fit for it to be compressed
 * whole.
 *
 * Parts in the row are read with the row: ranges would only lengthen the
 * tree by their directory entries, so the skeleton is planned again with
 * each container whole when res cut some into ranges.  *sample gets the
 * part of res compressed to judge the fit, if one was.
 */
static struct varlena *
inline_pointer(JtBuildResult *res, const struct varlena *doc, char cmethod,
			   int32 target, Oid toastrelid, JtCompressedPart *sample,
			   bool *tried)
{
	uint64		total = 0;
	uint64		header = sizeof(JtSkeletonHeader);
	bool		may_fold = jt_version_may_fold((uint32) jt_format_version);
	bool		ranged = false;
	JtBuildOptions opts = {0};
	JtBuildResult whole;

	*tried = false;
	for (uint32 i = 0; i < res->nparts; i++)
	{
		total += VARSIZE(res->parts[i].raw) - VARHDRSZ;
		ranged |= i > 0 &&
			res->parts[i].range_offset == res->parts[i - 1].range_offset +
			(int) jt_entry_size(res->version);
	}
	if (total + res->tree.len > inline_max_raw(cmethod, target) ||
		header >= (uint64) target)
		return NULL;
	if (may_fold ?
		!may_fit_inline(res, total + res->tree.len, cmethod,
						target - header, sample) :
		(header + res->tree.len + VARHDRSZ > (uint64) target ||
		 !may_fit_inline(res, total, cmethod,
						 target - header - res->tree.len, sample)))
		return NULL;
	*tried = true;

	opts.target = target;
	opts.range_size = PG_INT32_MAX;
	opts.version = res->version;
	if (ranged && jt_build_skeleton(doc, &opts, &whole))
	{
		if (skeleton_gives_back(&whole, doc, toastrelid))
			return try_inline(&whole, doc, cmethod, target, toastrelid,
							  may_fold, sample);
		/* a bug of the layout writer, as in build_and_store() */
		elog(WARNING, "jsonb_toaster: a skeleton planned without ranges would not give back the same bytes; kept with ranges");
	}
	return try_inline(res, doc, cmethod, target, toastrelid, may_fold,
					  sample);
}

/*
 * Would standard TOAST keep doc in the row, compressed with cmethod, in
 * room bytes?  As heap_toast_insert_or_update() decides it for a column of
 * att's storage: it compresses the value as toast_compress_datum() does,
 * and keeps it if the row then fits.  (Both the document and its
 * compressed form have 4-byte headers, so the alignment room counted is
 * the same.)
 */
static bool
core_keeps_in_row(Form_pg_attribute att, const struct varlena *doc,
				  char cmethod, int32 room)
{
	struct varlena *compressed;
	bool		fits;

	if (att->attstorage != TYPSTORAGE_EXTENDED &&
		att->attstorage != TYPSTORAGE_MAIN)
		return false;
	compressed = (struct varlena *)
		DatumGetPointer(toast_compress_datum(PointerGetDatum(doc), cmethod));
	if (compressed == NULL)
		return false;
	fits = (int64) VARSIZE(compressed) <= (int64) room;
	pfree(compressed);
	return fits;
}

/*
 * Add res's tree to the value writer gathers, as one more part of it: its
 * entries name the parts written[] gives as they lie (value id and size 0
 * for those of that value, format.h).  The tree part's number, or
 * UINT32_MAX if that value had no room; a tree that must leave the row
 * finds room.
 */
static uint32
write_tree_outside(JtPartWriter *writer, JtBuildResult *res,
				   const uint32 *written, bool must)
{
	jt_part_writer_seal(writer, must ? res->tree.len : 0);
	for (uint32 i = 0; i < res->nparts; i++)
	{
		JtPartEntry placed;

		if (written[i] == UINT32_MAX)
			continue;
		jt_part_writer_placed(writer, written[i], &placed);
		jt_build_set_stored(res, i, &placed);
	}
	return jt_tree_add_part(writer, res->tree.data, res->tree.len);
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
	char		cmethod = jt_column_compression(att);
	struct varlena *doc;
	JtBuildResult res;
	JtBuildOptions opts;
	uint32		version;
	int32		column_budget;
	int32		target;
	int32		inline_room;
	uint64		stored_outside = 0;
	JtSkeletonInfo hdr = {0};
	JtOldParts *old;
	JtPartEntry *planned = NULL;
	StringInfoData deltas;
	StringInfoData literal;
	uint32		nkept = 0;
	uint32		ndeltas = 0;
	JtPartWriter writer;
	uint32	   *written;
	uint32		tree_part;
	bool		tree_out;
	bool		tree_must;
	uint32		tree_budget;
	JtPartEntry *shared;
	JtCompressedPart sample = {0};
	bool		tried_inline = false;
	struct varlena *result;

	/*
	 * budget is core's room for the whole pointer, its headers included: a
	 * pointer past it would make core move the row's other columns to TOAST.
	 * The column's inline budget bounds the tree and the delta area (target)
	 * and an inline skeleton's payload (inline_room), as before.
	 */
	column_budget = jt_column_inline_budget(rel, att->attnum);
	inline_room = Max(Min(budget - (int32) VARHDRSZ_CUSTOM, column_budget), 0);
	target = Max(Min(budget - (int32) (VARHDRSZ_CUSTOM + sizeof(JtSkeletonHeader)),
					 column_budget), 0);

	doc = detoast_attr(value);
	/* version 7 only for a tree outside the row (write_tree_outside()) */
	version = (uint32) Min(jt_format_version, JT_SKELETON_VERSION_UNITS);
	opts.target = target;
	opts.range_size = (uint32) jt_range_size;
	opts.whole_up_to = jt_whole_container_size(version);
	opts.large_dirs = jt_format_version >= JT_SKELETON_VERSION_TREE_OUTSIDE;
	opts.open_values = jt_format_version >= JT_SKELETON_VERSION_FOLDED;
	opts.version = version;
	if (!jt_build_skeleton(doc, &opts, &res))
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

	/*
	 * Small enough once compressed: the parts stay in the pointer.  Not
	 * tried for a new version of a value whose parts took far more than the
	 * row has room for: an UPDATE rarely shrinks a document that much.
	 */
	if (jt_version_packs(res.version) &&
		!parts_took_far_more(oldvalue, inline_room) &&
		(result = inline_pointer(&res, doc, cmethod, inline_room, toastrelid,
								 &sample, &tried_inline)) != NULL)
		return result;

	/*
	 * A skeleton whose tree keeps no value of the document's root reads no
	 * value faster than a compressed document in the row does, and takes a
	 * TOAST value besides: leave such a document to core when core keeps it
	 * in the row.  That happens just under the room, where the skeleton's
	 * headers are what does not fit.  Only a document the inline forms
	 * found close enough to fit to compress is compressed again here.
	 */
	if (tried_inline && !res.keeps_fields &&
		core_keeps_in_row(att, doc, cmethod, Min(budget, column_budget)))
		return NULL;

	old = NULL;
	if (oldvalue != NULL && VARATT_IS_EXTERNAL_CUSTOM(oldvalue) &&
		may_read_column(rel, att->attnum))
		old = jt_old_parts_open(rel, oldvalue, res.version);
	if (old != NULL)
	{
		/* the new parts' directory entries, read ahead against the old */
		planned = palloc(res.nparts * sizeof(JtPartEntry));
		for (uint32 i = 0; i < res.nparts; i++)
		{
			jt_build_entry(&res, i, &planned[i]);
			/* looked up by the hash the old value's format takes */
			jt_old_parts_rehash(old, res.parts[i].raw, &planned[i].hash);
		}
		jt_old_parts_prefetch(old, planned, res.nparts);
	}
	initStringInfo(&deltas);
	initStringInfo(&literal);
	jt_part_writer_begin(&writer, rel, cmethod, options,
						 jt_version_packs(res.version),
						 jt_version_has_units(res.version) ? jt_unit_size : 0);
	jt_part_writer_reuse(&writer, &sample);
	/* a tree's directories that take it out of the row take no room */
	tree_budget = jt_tree_budget_bytes(res.tree.data, res.tree.len);
	written = palloc(Max(res.nparts, 1) * sizeof(uint32));
	shared = palloc(Max(res.nparts, 1) * sizeof(JtPartEntry));
	for (uint32 i = 0; i < res.nparts; i++)
	{
		struct varlena *raw = res.parts[i].raw;
		JtPartEntry taken;
		JtPartEntry base;
		uint32		first;
		uint32		removed;
		int64		room;

		written[i] = UINT32_MAX;

		/* a part the old value has already: take it over */
		if (old != NULL && jt_old_parts_take(old, &planned[i], raw, &taken))
		{
			jt_build_set_stored(&res, i, &taken);
			shared[nkept + ndeltas] = taken;
			stored_outside += jt_entry_stored_share(&taken);
			nkept++;
			continue;
		}

		/* a small edit of an old part, if the row has room for it */
		room = (int64) target - tree_budget - deltas.len -
			(int64) JT_DELTA_RECORD_OVERHEAD;
		if (old != NULL && room > 0 &&
			jt_old_parts_take_as_delta(old, raw,
									   (uint32) Min(JT_DELTA_BUDGET((int64) jt_range_size),
													room),
									   &literal, &first, &removed, &base))
		{
			jt_delta_append(&deltas, res.version, &base, first,
							removed, literal.data, literal.len);
			jt_build_set_stored(&res, i, &base);
			shared[nkept + ndeltas] = base;
			stored_outside += jt_entry_stored_share(&base);
			ndeltas++;
			continue;
		}

		written[i] = jt_part_writer_add(&writer, raw, true);
	}

	/*
	 * The values to give up were chosen before the parts were compared and
	 * compressed (jt_old_parts_prefetch()): a candidate that turned out to
	 * differ, or new parts that compressed better than the old ones' ratio
	 * promised (fewer live bytes), can leave this version keeping more dead
	 * bytes than live ones after all.
	 * Then it shares nothing: every part is written anew.
	 */
	if (nkept + ndeltas > 0 &&
		jt_parts_keep_too_many_dead(shared, nkept + ndeltas,
									jt_part_writer_bytes(&writer)))
	{
		elog(DEBUG1, "jsonb_toaster: sharing %u parts would keep more dead bytes than live ones: all written anew",
			 nkept + ndeltas);
		for (uint32 i = 0; i < res.nparts; i++)
			if (written[i] == UINT32_MAX)
				written[i] = jt_part_writer_add(&writer, res.parts[i].raw, true);
		resetStringInfo(&deltas);
		stored_outside = 0;
		nkept = ndeltas = 0;
	}

	/*
	 * The new parts, packed into one TOAST value, the tree too, maybe: not
	 * when no part is written, for the tree would take a value of its own
	 * (the old value's tree part with edits may do, tree_outside.c).
	 */
	tree_part = UINT32_MAX;
	tree_out = jt_tree_may_leave_row(res.tree.data, res.tree.len);
	tree_must = tree_out && jt_tree_must_leave_row(res.tree.data, res.tree.len);
	if (tree_out && writer.nparts > 0)
		tree_part = write_tree_outside(&writer, &res, written, tree_must);
	jt_part_writer_finish(&writer);
	for (uint32 i = 0; i < res.nparts; i++)
	{
		const JtPartEntry *stored;

		if (written[i] == UINT32_MAX)
			continue;
		stored = jt_part_writer_entry(&writer, written[i]);
		/* an outside tree names the parts as they were placed */
		if (tree_part == UINT32_MAX)
			jt_build_set_stored(&res, i, stored);
		stored_outside += jt_entry_stored_share(stored);
	}

	if (old != NULL)
		elog(DEBUG1, "jsonb_toaster: stored a new document of %u parts: %u kept, %u kept as deltas, %u written",
			 res.nparts, nkept, ndeltas, res.nparts - nkept - ndeltas);
	hdr.toastrelid = toastrelid;
	hdr.nparts = res.nparts;
	hdr.tree_size = res.tree.len;
	if (tree_part != UINT32_MAX)
		result = jt_tree_part_pointer(&hdr, &writer, tree_part, res.tree.data,
									  deltas.data, deltas.len, VARSIZE(doc),
									  stored_outside, pointer_version(&res));
	else
	{
		result = jt_make_pointer(&hdr, res.tree.data, deltas.data, deltas.len,
								 VARSIZE(doc), stored_outside,
								 pointer_version(&res));

		/*
		 * Nothing written (the old value's parts taken, changes kept as
		 * deltas): the old value's tree part, and the edits of it, if they
		 * are small.
		 */
		if (tree_out && old != NULL && writer.nparts == 0)
		{
			struct varlena *edited = jt_tree_edited_pointer(rel, result,
															oldvalue, target);

			if (edited != NULL)
				result = edited;
		}

		/* no row takes this tree: a TOAST value of its own, then */
		if (tree_must && !jt_pointer_tree_outside(result))
		{
			tree_part = write_tree_outside(&writer, &res, written, true);
			jt_part_writer_finish(&writer);
			Assert(tree_part != UINT32_MAX);
			result = jt_tree_part_pointer(&hdr, &writer, tree_part,
										  res.tree.data, deltas.data,
										  deltas.len, VARSIZE(doc),
										  stored_outside, pointer_version(&res));
		}
	}
	if (RelationIsLogicallyLogged(rel))
		jt_log_shared_values(rel, result, oldvalue);
	return result;
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

/* What fetch_tree_deleting() needs, and what it did. */
typedef struct TreeDeleting
{
	bool		is_speculative;
	Oid			deleted;		/* the value deleted, or InvalidOid */
} TreeDeleting;

/*
 * Part fetcher for the tree's part of a pointer being deleted: the TOAST
 * value holding it is deleted as the tree is read from its chunks
 * (jt_delete_value_reading(): one scan of that value where reading the
 * tree and then deleting the value took two).
 */
static void
fetch_tree_deleting(void *arg, uint32 first, uint32 n,
					const JtPartEntry *ranges, Oid toastrelid,
					struct varlena **raws, bool *should_free)
{
	TreeDeleting *td = (TreeDeleting *) arg;

	Assert(first == 0 && n == 1);
	raws[0] = jt_delete_value_reading(toastrelid, &ranges[0],
									  td->is_speculative);
	should_free[0] = true;
	td->deleted = ranges[0].valueid;
}

/*
 * For a DELETE of attr, a pointer whose tree lies outside the row and was
 * not read in by this backend already: the parts it names, as
 * jt_pointer_parts() lists them, the TOAST value holding the tree deleted
 * as the tree is read (fetch_tree_deleting()) and named by *deleted.  -1,
 * doing nothing, for any other pointer.
 */
static int64
list_deleting_tree_value(struct varlena *attr, bool is_speculative,
						 JtPartEntry **ranges, Oid *toastrelid, Oid *deleted)
{
	uint32		len;
	const char *payload = jt_pointer_payload(attr, &len);
	JtSkeletonInfo info;
	JtSkeleton	skel;
	TreeDeleting td = {is_speculative, InvalidOid};
	JtPartFetcher fetcher = {.fetch = fetch_tree_deleting, .decompress = NULL,
	.arg = &td};
	uint32		n;

	if (len < sizeof(JtSkeletonHeader))
		return -1;
	jt_payload_read_info(payload, &info);
	if (!info.tree_outside || jt_pointer_opened_before(attr))
		return -1;
	jt_open_pointer_from(attr, &skel, &fetcher);
	n = jt_skeleton_list_parts(&skel, ranges);
	*toastrelid = skel.hdr.toastrelid;
	*deleted = td.deleted;
	return n;
}

/*
 * Delete the TOAST values of attr's parts that replacement, the value
 * stored in its place, does not keep.  A value holding several parts stays
 * as long as the replacement keeps one of them (docs/ownership.md).
 */
static void
jt_delete(Relation rel, struct varlena *attr, struct varlena *replacement,
		  bool is_speculative)
{
	JtPartEntry *ranges;
	JtKeptParts *kept;
	Oid			toastrelid;
	Oid			deleted = InvalidOid;
	int64		listed;
	uint32		n;
	MemoryContext work;
	MemoryContext caller;

	/* the same pointer is kept in the new row version: it owns them */
	if (replacement != NULL && VARATT_IS_EXTERNAL_CUSTOM(replacement) &&
		VARSIZE_EXTERNAL(replacement) == VARSIZE_EXTERNAL(attr) &&
		memcmp(replacement, attr, VARSIZE_EXTERNAL(attr)) == 0)
		return;

	/* once per row: what is allocated here goes when it is done */
	work = AllocSetContextCreate(CurrentMemoryContext, "jsonb_toaster delete",
								 ALLOCSET_SMALL_SIZES);
	caller = MemoryContextSwitchTo(work);

	/*
	 * An UPDATE has read the old tree in to compare or change the document:
	 * only a DELETE (or an aborted insertion) takes the tree from its chunks.
	 */
	listed = replacement == NULL ?
		list_deleting_tree_value(attr, is_speculative, &ranges, &toastrelid,
								 &deleted) : -1;
	if (listed >= 0)
		n = (uint32) listed;
	else
		n = jt_pointer_parts(attr, &toastrelid, &ranges);
	n = jt_distinct_values(ranges, n);
	kept = jt_kept_parts(replacement, toastrelid);
	for (uint32 i = 0; i < n; i++)
	{
		varatt_external ext;
		struct varlena *ptr;

		/* the new row version took this value over, or it is gone already */
		if (jt_part_is_kept(kept, ranges[i].valueid) ||
			ranges[i].valueid == deleted)
			continue;
		jt_value_pointer(&ranges[i], toastrelid, &ext);
		ptr = palloc(TOAST_POINTER_SIZE);
		SET_VARTAG_EXTERNAL(ptr, VARTAG_ONDISK);
		memcpy(VARDATA_EXTERNAL(ptr), &ext, sizeof(ext));
		toast_delete_datum(rel, PointerGetDatum(ptr), is_speculative);
		pfree(ptr);
	}
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(work);
}

/*
 * The TOAST values get_parts lists for attr, parsed into skel, each once,
 * by value id.  In logical decoding, which cannot read a tree outside the
 * row, only the value holding the tree: reassemble finds the others from
 * it (ReorderBufferCustomToastPart()), and a pointer an UPDATE left
 * unchanged, whose tree's value the transaction does not hold, is shown
 * unchanged.
 */
static uint32
listed_values(struct varlena *attr, JtSkeleton *skel, JtPartEntry **values)
{
	uint32		n;

	jt_parse_pointer(attr, skel);
	if (skel->tree_missing && HistoricSnapshotActive())
	{
		*values = palloc(sizeof(JtPartEntry));
		(*values)[0] = skel->tree_entry;
		return 1;
	}
	/* parsed already: only a tree outside the row is still to read */
	if (skel->tree_missing)
		jt_open_pointer(attr, skel);
	n = jt_skeleton_list_parts(skel, values);
	return jt_distinct_values(*values, n);
}

/*
 * Core calls this once a tuple in contexts that live as long as a table
 * rewrite or a decoding session: only the array it is given back may stay
 * in the caller's context.  The parts core handles are TOAST values: those
 * the pointer's parts lie in, each once.
 */
static int
jt_get_parts(struct varlena *attr, varatt_external **parts)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	JtSkeleton	skel;
	JtPartEntry *ranges;
	varatt_external *result;
	uint32		n;

	work = AllocSetContextCreate(caller, "jsonb_toaster get_parts",
								 ALLOCSET_SMALL_SIZES);
	MemoryContextSwitchTo(work);
	n = listed_values(attr, &skel, &ranges);
	result = MemoryContextAlloc(caller, Max(n, 1) * sizeof(varatt_external));
	for (uint32 i = 0; i < n; i++)
		jt_value_pointer(&ranges[i], skel.hdr.toastrelid, &result[i]);
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
	JtPartEntry *ranges;
	DecodedValues decoded;
	struct varlena *flat;
	struct varlena *result;

	/* as jt_get_parts(): called once a tuple in a long-lived context */
	work = AllocSetContextCreate(caller, "jsonb_toaster reassemble",
								 ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(work);
	memset(&decoded, 0, sizeof(decoded));
	decoded.nlisted = listed_values(attr, &skel, &ranges);
	decoded.listed = ranges;
	decoded.listed_contents = part_values;
	decoded.toastrelid = skel.hdr.toastrelid;
	decoded.maxasked = 8;
	decoded.asked = palloc_array(JtPartEntry, decoded.maxasked);
	decoded.asked_contents = palloc_array(struct varlena *, decoded.maxasked);
	jt_unit_cache_init(&decoded.units);
	decoded.shared = jt_shared_stream_find(ranges, part_values,
										   decoded.nlisted, skel.hdr.toastrelid,
										   skel.tree_missing);
	fetcher.fetch = fetch_decoded_parts;
	fetcher.decompress = NULL;
	fetcher.arg = &decoded;
	/* a tree outside the row is cut from the values decoded too */
	jt_open_pointer_from(attr, &skel, &fetcher);
	if (decoded.shared == NULL && decoded.nlisted == 1 && skel.has_tree_entry)
		decoded.shared = find_stream_under_tree(&skel, &decoded);
	flat = jt_skeleton_flatten(&skel, &fetcher);
	result = MemoryContextAlloc(caller, VARSIZE(flat));
	memcpy(result, flat, VARSIZE(flat));
	MemoryContextSwitchTo(caller);
	MemoryContextDelete(work);
	return result;
}
