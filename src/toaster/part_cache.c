/*-------------------------------------------------------------------------
 *
 * part_cache.c
 *	  The parts of the skeleton flattened last, kept until the end of the
 *	  transaction (patched servers only).
 *
 * "UPDATE t SET js = jsonb_set(js, ...)" flattens the old value to run the
 * function, then offers the result to the toaster, which confirms, byte by
 * byte, which of its parts equal parts of the old value (sharing.c).
 * Without this cache the confirmation fetched and decompressed those parts
 * a second time.  Flattening a skeleton therefore keeps a copy of the
 * pointer and of the raw parts it read, and the confirmation uses them
 * when the old value is that same pointer, byte for byte.
 *
 * Why the copies are the old value's parts: the pointer names each part by
 * its TOAST value id, and the row being updated is live and locked, so
 * its parts are still stored.  A part is never changed once written.  For
 * a copy to be stale, the part read would have to be deleted and removed
 * by VACUUM, its value id handed out again (new ids skip those still in
 * the TOAST index, and come back only after the cluster-wide OID counter
 * wraps around), and a new pointer written that is byte for byte the one
 * kept, so naming the new part with the old one's sizes and content hash.
 * The cache is also cleared when the transaction ends (and when a
 * subtransaction aborts, whose rows may be pruned at once).  The bytes are
 * still compared, as before.
 *
 * Only values of at most MAX_CACHED_BYTES of parts are kept, counted as
 * they are read, so that the memory held is bounded whatever a pointer
 * declares; and only when the transaction may still write
 * (support/writing_statement.c): a SELECT that is a transaction of its own
 * would copy every document it reads whole for nothing, and the flattener
 * decompresses parts straight into the result when it need not keep them.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_cache.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "format/flatten.h"
#include "format/pointer.h"
#include "support/writing_statement.h"
#include "support/xact_reset.h"
#include "toast/part_fetch.h"
#include "toast/pointer_open.h"
#include "toaster/part_cache.h"

#define MAX_CACHED_BYTES	(1024 * 1024)

typedef struct CachedPart
{
	JtPartEntry range;			/* as the skeleton's directory has it */
	struct varlena *raw;
} CachedPart;

static MemoryContext cache_cxt = NULL;
static struct varlena *cache_pointer = NULL;	/* the value flattened */
static CachedPart *cache_parts = NULL;
static uint32 cache_nparts = 0;
static uint32 cache_capacity = 0;	/* the pointer's part count */
static Size cache_bytes = 0;
static bool cache_filling = false;	/* a flatten is keeping its parts */
static uint64 cache_generation = 0; /* counts clears */

static void
cache_clear(void)
{
	if (cache_cxt && cache_pointer)
		MemoryContextReset(cache_cxt);
	cache_pointer = NULL;
	cache_parts = NULL;
	cache_nparts = 0;
	cache_capacity = 0;
	cache_bytes = 0;
	cache_generation++;
}

/*
 * Keep a copy of a part read from TOAST while the value stays under the
 * limit.
 */
static void
keep_part(const JtPartEntry *range, const struct varlena *raw)
{
	Size		size = VARSIZE(raw);
	CachedPart *part;

	if (cache_pointer == NULL)
		return;					/* given up on this value */
	/* the flattener checks part numbers against the header's count */
	if (cache_nparts >= cache_capacity)
		elog(ERROR, "jsonb_toaster fetched more parts than its pointer declares");
	if (cache_bytes + size > MAX_CACHED_BYTES)
	{
		cache_clear();			/* too large: keep nothing */
		return;
	}
	part = &cache_parts[cache_nparts];
	part->raw = MemoryContextAlloc(cache_cxt, size);
	memcpy(part->raw, raw, size);
	part->range = *range;
	cache_bytes += size;
	cache_nparts++;
}

/*
 * What a flatten of a stored pointer reads: a part changed in memory in
 * place of stored part partno (if raw is set), and the stored ones, kept
 * in the cache or not.
 */
typedef struct FlattenParts
{
	uint32		partno;
	struct varlena *raw;
	bool		keep;
	JtUnitCache units;			/* zeroed: holds nothing */
} FlattenParts;

/* Read stored parts first .. first + n - 1, keeping them if asked. */
static void
fetch_stored(FlattenParts *fp, uint32 first, uint32 n,
			 const JtPartEntry *ranges, Oid toastrelid,
			 struct varlena **raws, bool *should_free)
{
	if (n == 0)
		return;
	if (!fp->keep)
	{
		/* the flattener decompresses them as it goes */
		jt_fetch_stored_parts_compressed(&fp->units, first, n, ranges,
										 toastrelid, raws, should_free);
		return;
	}
	jt_fetch_stored_parts(&fp->units, first, n, ranges, toastrelid, raws,
						  should_free);
	for (uint32 i = 0; i < n; i++)
		keep_part(&ranges[i], raws[i]);
}

/* Part fetcher: the changed part, and the stored ones, kept if asked. */
static void
fetch_changed_or_stored(void *arg, uint32 first, uint32 n,
						const JtPartEntry *ranges, Oid toastrelid,
						struct varlena **raws, bool *should_free)
{
	FlattenParts *fp = (FlattenParts *) arg;
	uint32		changed;
	JtPartEntry *others;

	if (fp->raw == NULL || fp->partno < first || fp->partno - first >= n)
	{
		fetch_stored(fp, first, n, ranges, toastrelid, raws, should_free);
		return;
	}

	/* the stored parts around the changed one, read together */
	changed = fp->partno - first;
	others = palloc(Max(n - 1, 1) * sizeof(JtPartEntry));
	memcpy(others, ranges, changed * sizeof(JtPartEntry));
	memcpy(others + changed, ranges + changed + 1,
		   (n - changed - 1) * sizeof(JtPartEntry));
	fetch_stored(fp, first, n - 1, others, toastrelid, raws, should_free);
	pfree(others);
	/* make room for the changed part in document order */
	memmove(raws + changed + 1, raws + changed,
			(n - changed - 1) * sizeof(struct varlena *));
	memmove(should_free + changed + 1, should_free + changed,
			(n - changed - 1) * sizeof(bool));
	raws[changed] = fp->raw;
	should_free[changed] = false;
}

/* The part fetcher of fetch_changed_or_stored(). */
static JtPartFetcher
changed_or_stored(FlattenParts *fp)
{
	JtPartFetcher fetcher;

	fetcher.fetch = fetch_changed_or_stored;
	fetcher.decompress = jt_part_decompress;
	fetcher.arg = fp;
	return fetcher;
}

/*
 * Flatten skel, whose parts are those of the stored pointer "pointer"
 * (changed, if any, in memory), keeping the stored ones read as parts of
 * pointer for the rest of the transaction when they are small enough.
 */
static struct varlena *
flatten_keeping(struct varlena *pointer, JtSkeleton *skel, FlattenParts *fp)
{
	struct varlena *result;
	Size		size = VARSIZE_EXTERNAL(pointer);
	JtPartFetcher fetcher = changed_or_stored(fp);

	/*
	 * A flatten within a flatten (none today) keeps nothing: the cache is
	 * being filled with the parts of the outer value.
	 */
	fp->keep = false;
	if (cache_filling)
		return jt_skeleton_flatten(skel, &fetcher);
	cache_clear();
	if (skel->hdr.nparts == 0 || !jt_transaction_may_still_write())
		return jt_skeleton_flatten(skel, &fetcher);

	jt_reset_at_xact_end(cache_clear);
	if (cache_cxt == NULL)
		cache_cxt = AllocSetContextCreate(TopMemoryContext,
										  "jsonb_toaster part cache",
										  ALLOCSET_DEFAULT_SIZES);
	cache_pointer = MemoryContextAlloc(cache_cxt, size);
	memcpy(cache_pointer, pointer, size);
	cache_parts = MemoryContextAlloc(cache_cxt,
									 skel->hdr.nparts * sizeof(CachedPart));
	cache_capacity = skel->hdr.nparts;

	fp->keep = true;
	cache_filling = true;
	PG_TRY();
	{
		result = jt_skeleton_flatten(skel, &fetcher);
	}
	PG_FINALLY();
	{
		cache_filling = false;
	}
	PG_END_TRY();
	return result;
}

/*
 * Flatten one of our pointers, keeping its parts for the rest of the
 * transaction when they are small enough.
 */
struct varlena *
jt_flatten_pointer(struct varlena *attr)
{
	JtSkeleton	skel;
	FlattenParts fp = {0};
	varatt_custom header;
	struct varlena *result;

	jt_open_pointer(attr, &skel);
	result = flatten_keeping(attr, &skel, &fp);
	jt_unit_cache_release(&fp.units);
	jt_skeleton_release(&skel);
	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (VARSIZE(result) != (uint32) header.va_rawsize)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The document is %u bytes long, its pointer says %d.",
						   (uint32) VARSIZE(result), header.va_rawsize)));
	return result;
}

/*
 * Flatten skel, a copy of the stored pointer "pointer" with its tree
 * changed, or the directory entry of part partno and that part (raw), in
 * memory (update/); partno is ignored when raw is NULL.  With
 * keep, the stored parts read are kept as jt_flatten_pointer() keeps them,
 * for the general path that follows when the toaster turns the change
 * down; without, they are decompressed straight into the result.
 */
struct varlena *
jt_flatten_changed(struct varlena *pointer, JtSkeleton *skel, uint32 partno,
				   struct varlena *raw, bool keep)
{
	FlattenParts fp = {0};
	struct varlena *result;

	fp.partno = partno;
	fp.raw = raw;
	if (!keep)
	{
		JtPartFetcher fetcher = changed_or_stored(&fp);

		result = jt_skeleton_flatten(skel, &fetcher);
	}
	else
		result = flatten_keeping(pointer, skel, &fp);
	jt_unit_cache_release(&fp.units);
	return result;
}

/*
 * Does the cache hold the parts of this stored value?  Returns a token for
 * jt_part_cache_lookup(), or 0.
 */
uint64
jt_part_cache_holds(struct varlena *attr)
{
	if (cache_pointer == NULL ||
		VARSIZE_EXTERNAL(attr) != VARSIZE_EXTERNAL(cache_pointer) ||
		memcmp(attr, cache_pointer, VARSIZE_EXTERNAL(attr)) != 0)
		return 0;
	return cache_generation;
}

/*
 * The raw content of a part of the value jt_part_cache_holds() recognised
 * (token), or NULL.  The caller must not free it, nor keep it past its
 * next call into this file.
 */
const struct varlena *
jt_part_cache_lookup(uint64 token, const JtPartEntry *range)
{
	if (token == 0 || token != cache_generation)
		return NULL;
	for (uint32 i = 0; i < cache_nparts; i++)
	{
		const JtPartEntry *r = &cache_parts[i].range;

		if (r->valueid == range->valueid && r->offset == range->offset &&
			r->extinfo == range->extinfo &&
			r->rawsize == range->rawsize)
		{
			elog(DEBUG1, "jsonb_toaster: part read again from the copy kept by the flatten");
			return cache_parts[i].raw;
		}
	}
	return NULL;
}
