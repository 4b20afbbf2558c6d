/*-------------------------------------------------------------------------
 *
 * part_fetch.c
 *	  Read a skeleton's parts from its TOAST relation.
 *
 * A flatten needs every part of a reference, one after another.  Fetching
 * each as core de-TOASTs a value costs, per part, opening the TOAST
 * relation and its index, a scan and a descent of the index.  The parts of
 * a reference are instead read together: one ordered scan of the
 * (chunk_id, chunk_seq) index whose key is "chunk_id = ANY(the parts'
 * value ids)" ("chunk_id = the value id" for one part).  btree steps from
 * one value id to the next along the leaf pages without descending again
 * when they are close, as the value ids of parts written together are.
 * The chunks are checked as heap_fetch_toast_slice() checks them (all
 * there, in order, of the expected sizes), the parts assembled and
 * decompressed; a compressed part of one chunk is decompressed straight
 * from it.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toast/part_fetch.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "decode/decode.h"
#include "format/delta.h"
#include "format/flatten.h"
#include "support/compat.h"
#include "toast/part_fetch.h"
#include "toast/toast_iterator.h"

/* One part being read: where its chunks go. */
typedef struct PartRead
{
	Oid			valueid;
	uint32		index;			/* in the caller's arrays */
	const JtPartEntry *range;
	int32		extsize;		/* stored size */
	int32		nchunks;
	int32		next_chunk;
	struct varlena *stored;		/* the stored stream, with a header */
	struct varlena *raw;		/* or, for a compressed part of one chunk
								 * wanted raw: its content, decompressed
								 * straight from the chunk */
} PartRead;

static void decompress_stream(const char *stream, int32 extsize,
							  const JtPartEntry *range, Oid toastrelid,
							  struct varlena *raw);

/* A standard on-disk TOAST pointer to a part, as a palloc'd datum. */
struct varlena *
jt_part_pointer(const JtPartEntry *range, Oid toastrelid)
{
	varatt_external ext;
	struct varlena *ptr = palloc(TOAST_POINTER_SIZE);

	ext.va_rawsize = range->rawsize;
	ext.va_extinfo = range->extinfo;
	ext.va_valueid = range->valueid;
	ext.va_toastrelid = toastrelid;
	SET_VARTAG_EXTERNAL(ptr, VARTAG_ONDISK);
	memcpy(VARDATA_EXTERNAL(ptr), &ext, sizeof(ext));
	return ptr;
}


static int
part_read_cmp(const void *a, const void *b)
{
	Oid			x = ((const PartRead *) a)->valueid;
	Oid			y = ((const PartRead *) b)->valueid;

	return (x > y) - (x < y);
}

/* The part a chunk belongs to: parts are sorted by value id. */
static PartRead *
find_part(PartRead *parts, uint32 n, Oid valueid)
{
	uint32		lo = 0;
	uint32		hi = n;

	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (parts[mid].valueid < valueid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && parts[lo].valueid == valueid ? &parts[lo] : NULL;
}

/* Copy one chunk into its part, checking it as core does. */
static void
take_chunk(Relation toastrel, PartRead *part, HeapTuple tuple)
{
	const char *data;
	int32		len;

	jt_toast_chunk_data(toastrel, tuple, part->valueid, part->next_chunk,
						part->nchunks, part->extsize, &data, &len);
	if (part->raw != NULL)
		decompress_stream(data, len, part->range, RelationGetRelid(toastrel),
						  part->raw);
	else
		memcpy(VARDATA(part->stored) + (Size) part->next_chunk * TOAST_MAX_CHUNK_SIZE,
			   data, len);
	part->next_chunk++;
}

/* Scan the chunks of every part at once, into parts[].stored or .raw. */
static void
scan_chunks(Oid toastrelid, PartRead *parts, uint32 n)
{
	Relation	toastrel;
	Relation   *toastidxs;
	int			num_indexes;
	int			valid_index;
	Datum	   *ids = NULL;
	ArrayType  *idarray = NULL;
	ScanKeyData key;
	SysScanDesc scan;
	SnapshotData toast_snapshot pg_attribute_unused();	/* before 18 */
	Snapshot	snapshot;
	HeapTuple	tuple;
	TupleDesc	tupdesc;

	toastrel = table_open(toastrelid, AccessShareLock);
	tupdesc = RelationGetDescr(toastrel);
	valid_index = toast_open_indexes(toastrel, AccessShareLock, &toastidxs,
									 &num_indexes);
	snapshot = jt_get_toast_snapshot(&toast_snapshot);
	if (n == 1)
	{
		/* one value id: a plain equality, as core's, spares the array keys */
		ScanKeyInit(&key, (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
					ObjectIdGetDatum(parts[0].valueid));
	}
	else
	{
		ids = palloc(n * sizeof(Datum));
		for (uint32 i = 0; i < n; i++)
			ids[i] = ObjectIdGetDatum(parts[i].valueid);
		idarray = construct_array(ids, (int) n, OIDOID, sizeof(Oid), true,
								  TYPALIGN_INT);
		ScanKeyEntryInitialize(&key, SK_SEARCHARRAY, (AttrNumber) 1,
							   BTEqualStrategyNumber, InvalidOid, InvalidOid,
							   F_OIDEQ, PointerGetDatum(idarray));
	}
	scan = systable_beginscan_ordered(toastrel, toastidxs[valid_index],
									  snapshot, 1, &key);
	while ((tuple = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		Oid			valueid = DatumGetObjectId(fastgetattr(tuple, 1, tupdesc, &isnull));
		PartRead   *part = find_part(parts, n, valueid);

		if (part == NULL)
			elog(ERROR, "index scan returned toast value %u, not asked for",
				 valueid);
		take_chunk(toastrel, part, tuple);
	}
	for (uint32 i = 0; i < n; i++)
		if (parts[i].next_chunk < parts[i].nchunks)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("missing chunk number %d for toast value %u in %s",
							parts[i].next_chunk, parts[i].valueid,
							RelationGetRelationName(toastrel))));
	systable_endscan_ordered(scan);
	/* the locks stay until the end of the transaction, as the iterator's */
	toast_close_indexes(toastidxs, num_indexes, NoLock);
	table_close(toastrel, NoLock);
	if (idarray)
	{
		pfree(idarray);
		pfree(ids);
	}
}

/*
 * Decompress a part stored compressed (stored: PostgreSQL's in-memory
 * compressed form, its stream starting with the raw size and the method as
 * core writes it) into raw, which has room for range->rawsize bytes; raw
 * gets a 4-byte header.  The project's decoders (src/decode/decode.c) give core's
 * output byte for byte and copy the repeating patterns of wide arrays in
 * fewer, longer steps.
 */
void
jt_part_decompress(const struct varlena *stored, const JtPartEntry *range,
				   Oid toastrelid, struct varlena *raw)
{
	decompress_stream(VARDATA(stored), VARSIZE(stored) - VARHDRSZ, range,
					  toastrelid, raw);
}

/* The same, from the stored stream (extsize bytes) where it lies. */
static void
decompress_stream(const char *stream, int32 extsize, const JtPartEntry *range,
				  Oid toastrelid, struct varlena *raw)
{
	uint32		info;
	int32		rawlen;
	JtDecodeMethod method;
	const char *error = NULL;

	if (extsize < (int32) sizeof(uint32))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						range->valueid, get_rel_name(toastrelid)),
				 errdetail("It is shorter than its header.")));
	memcpy(&info, stream, sizeof(uint32));
	rawlen = (int32) (info & VARLENA_EXTSIZE_MASK);
	switch (info >> VARLENA_EXTSIZE_BITS)
	{
		case TOAST_PGLZ_COMPRESSION_ID:
			method = JT_DECODE_PGLZ;
			break;
		case TOAST_LZ4_COMPRESSION_ID:
			method = JT_DECODE_LZ4;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("invalid compression method id %u of toast value %u in %s",
							info >> VARLENA_EXTSIZE_BITS, range->valueid,
							get_rel_name(toastrelid))));
	}
	if (rawlen != range->rawsize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						range->valueid, get_rel_name(toastrelid)),
				 errdetail("Its header gives a raw size of %d bytes, its pointer %d.",
						   rawlen, range->rawsize - VARHDRSZ)));

	SET_VARSIZE(raw, rawlen + VARHDRSZ);
	if (jt_decode_all(method, stream + sizeof(uint32),
					  extsize - sizeof(uint32), VARDATA(raw), rawlen,
					  &error) != rawlen)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed %s data of toast value %u in %s is corrupt",
						method == JT_DECODE_PGLZ ? "pglz" : "lz4",
						range->valueid, get_rel_name(toastrelid)),
				 errdetail("%s.", error ? error : "It ends before its raw size")));
}

/*
 * Read parts first .. first + n - 1, whose directory entries are
 * ranges[], from the TOAST relation, all in one scan.  A compressed part
 * is decompressed unless keep_compressed.
 */
static void
fetch_stored_parts(uint32 n, const JtPartEntry *ranges, Oid toastrelid,
				   struct varlena **raws, bool *should_free,
				   bool keep_compressed)
{
	PartRead   *parts;

	for (uint32 i = 0; i < n; i++)
		should_free[i] = true;

	parts = palloc(n * sizeof(PartRead));
	for (uint32 i = 0; i < n; i++)
	{
		PartRead   *part = &parts[i];

		part->valueid = ranges[i].valueid;
		part->index = i;
		part->range = &ranges[i];
		part->extsize = ranges[i].extinfo & VARLENA_EXTSIZE_MASK;
		if (part->extsize > ranges[i].rawsize - VARHDRSZ)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("corrupt jsonb_toaster value"),
					 errdetail("The part in toast value %u is stored in more bytes than it holds.",
							   ranges[i].valueid)));
		part->nchunks = part->extsize > 0 ?
			(part->extsize - 1) / TOAST_MAX_CHUNK_SIZE + 1 : 0;
		part->next_chunk = 0;
	}
	qsort(parts, n, sizeof(PartRead), part_read_cmp);
	for (uint32 i = 1; i < n; i++)
	{
		if (parts[i].valueid == parts[i - 1].valueid)
		{
			/* two entries name one value (no bug of ours writes that) */
			pfree(parts);
			for (uint32 j = 0; j < n; j++)
				raws[j] = jt_read_part(&ranges[j], toastrelid);
			return;
		}
	}
	for (uint32 i = 0; i < n; i++)
	{
		PartRead   *part = &parts[i];

		part->stored = NULL;
		part->raw = NULL;
		if (jt_stored_compressed(part->range) && !keep_compressed &&
			part->nchunks == 1)
			part->raw = palloc(part->range->rawsize);
		else
			part->stored = palloc(part->extsize + VARHDRSZ);
	}

	scan_chunks(toastrelid, parts, n);

	for (uint32 i = 0; i < n; i++)
	{
		PartRead   *part = &parts[i];
		const JtPartEntry *range = part->range;

		if (part->raw != NULL)
			raws[part->index] = part->raw;
		else if (jt_stored_compressed(part->range))
		{
			SET_VARSIZE_COMPRESSED(part->stored, part->extsize + VARHDRSZ);
			if (keep_compressed)
				raws[part->index] = part->stored;
			else
			{
				struct varlena *raw = palloc(range->rawsize);

				jt_part_decompress(part->stored, range, toastrelid, raw);
				raws[part->index] = raw;
				pfree(part->stored);
			}
		}
		else
		{
			SET_VARSIZE(part->stored, part->extsize + VARHDRSZ);
			raws[part->index] = part->stored;
		}
	}
	pfree(parts);
}

/* Part fetcher: every part comes back decompressed. */
void
jt_fetch_stored_parts(void *arg, uint32 first, uint32 n,
					  const JtPartEntry *ranges, Oid toastrelid,
					  struct varlena **raws, bool *should_free)
{
	fetch_stored_parts(n, ranges, toastrelid, raws, should_free, false);
}

/*
 * Part fetcher for flattening: compressed parts come back as they are
 * stored, and the flattener decompresses each where and when it uses it.
 */
void
jt_fetch_stored_parts_compressed(void *arg, uint32 first, uint32 n,
								 const JtPartEntry *ranges, Oid toastrelid,
								 struct varlena **raws, bool *should_free)
{
	fetch_stored_parts(n, ranges, toastrelid, raws, should_free, true);
}

/* One part's raw content. */
struct varlena *
jt_read_part(const JtPartEntry *range, Oid toastrelid)
{
	struct varlena *raw;
	bool		should_free;

	jt_fetch_stored_parts(NULL, 0, 1, range, toastrelid, &raw, &should_free);
	return raw;
}

/*
 * The raw content of a part of skel (a jsonb datum), read from TOAST and,
 * for a part kept as a delta, rebuilt from its base.  *base, if given,
 * gets what is stored: the base, or the content itself.
 */
struct varlena *
jt_read_part_content(const JtSkeleton *skel, const JtPartEntry *range,
					 struct varlena **base)
{
	JtPartEntry stored = jt_stored_range(skel, range);
	const JtDelta *d = jt_delta_for(skel, range->valueid);
	struct varlena *raw = jt_read_part(&stored, skel->hdr.toastrelid);
	struct varlena *content;

	if (d == NULL)
	{
		if (base)
			*base = raw;
		return raw;
	}
	content = jt_delta_apply(d, range, raw, skel->version);
	if (base)
		*base = raw;
	else
		pfree(raw);
	return content;
}

/*
 * The parts of a skeleton as its TOAST relation stores them: decompressed,
 * or, for flatteners that decompress where they need it, as stored.
 */
const JtPartFetcher jt_stored_parts = {
	.fetch = jt_fetch_stored_parts,
	.decompress = NULL,
	.arg = NULL,
};

const JtPartFetcher jt_stored_parts_compressed = {
	.fetch = jt_fetch_stored_parts_compressed,
	.decompress = jt_part_decompress,
	.arg = NULL,
};
