/*-------------------------------------------------------------------------
 *
 * part_fetch.c
 *	  Read a skeleton's parts from its TOAST relation.
 *
 * A flatten needs every part of a reference, one after another.  Fetching
 * each as core de-TOASTs a value costs, per part, opening the TOAST
 * relation and its index, a scan and a descent of the index.  The parts
 * asked for together are read together: the chunks of the TOAST values
 * read whole in one ordered scan of the (chunk_id, chunk_seq) index whose
 * key is "chunk_id = ANY(their value ids)" (btree steps from one value id to
 * the next along the leaf pages without descending again when they are
 * close, as the value ids of values written together are), and those of
 * each value read in part (parts packed with others: format.h) in a scan
 * bounded by chunk_seq.  The chunks are checked as heap_fetch_toast_slice()
 * checks them (all there, in order, of the sizes their value's size
 * implies), the parts assembled and decompressed; a compressed part within
 * one chunk is decompressed straight from it.
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

#ifdef JT_HAVE_LIBLZ4
#include <lz4.h>
#endif

#include "decode/decode.h"
#include "format/delta.h"
#include "format/flatten.h"
#include "format/part.h"
#include "support/compat.h"
#include "toast/part_fetch.h"
#include "toast/toast_iterator.h"

/* The stored bytes of one part, or of one compression unit, being read. */
typedef struct PartRead
{
	Oid			valueid;
	uint32		index;			/* in the caller's arrays */
	const JtPartEntry *range;
	int32		offset;			/* its stored bytes in its value */
	int32		extsize;
	struct varlena *stored;		/* the stored stream, with a header */
	struct varlena *raw;		/* or, for a compressed part within one chunk
								 * wanted raw: its content, decompressed
								 * straight from the chunk */
	const uint32 *wanted;		/* the parts read from these bytes: one, or
								 * those wanted of a compression unit */
	uint32		nwanted;
} PartRead;

/* The parts read from one TOAST value, and the chunks that hold them. */
typedef struct ValueRead
{
	Oid			valueid;
	int32		value_size;
	int32		nchunks;		/* of the whole value */
	int32		first_chunk;	/* the chunks read */
	int32		last_chunk;
	int32		next_chunk;		/* the one expected next */
	PartRead   *parts;			/* sorted by offset */
	uint32		nparts;
} ValueRead;

/* Is the whole of a value read? */
static inline bool
read_whole(const ValueRead *v)
{
	return v->first_chunk == 0 && v->last_chunk == v->nchunks - 1;
}

static void decompress_stream(const char *stream, int32 extsize,
							  const JtPartEntry *range, Oid toastrelid,
							  struct varlena *raw);

/* Give the parts of value v what chunk seq (data, len bytes) holds. */
static void
take_chunk(const ValueRead *v, int32 seq, const char *data, int32 len,
		   Oid toastrelid)
{
	int64		chunk_start = (int64) seq * TOAST_MAX_CHUNK_SIZE;
	int64		chunk_end = chunk_start + len;

	for (uint32 i = 0; i < v->nparts; i++)
	{
		PartRead   *part = &v->parts[i];
		int64		from = Max(chunk_start, part->offset);
		int64		to = Min(chunk_end, (int64) part->offset + part->extsize);

		if (from >= to)
			continue;
		if (part->raw != NULL)
			decompress_stream(data + (from - chunk_start), (int32) (to - from),
							  part->range, toastrelid, part->raw);
		else
			memcpy(VARDATA(part->stored) + (from - part->offset),
				   data + (from - chunk_start), to - from);
	}
}

/* Check a chunk of value v and give its parts what it holds. */
static void
take_next_chunk(Relation toastrel, ValueRead *v, HeapTuple tuple)
{
	const char *data;
	int32		len;

	jt_toast_chunk_data(toastrel, tuple, v->valueid, v->next_chunk, v->nchunks,
						v->value_size, &data, &len);
	take_chunk(v, v->next_chunk, data, len, RelationGetRelid(toastrel));
	v->next_chunk++;
}

static void
check_all_read(Relation toastrel, const ValueRead *v)
{
	if (v->next_chunk <= v->last_chunk)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("missing chunk number %d for toast value %u in %s",
						v->next_chunk, v->valueid,
						RelationGetRelationName(toastrel))));
}

/* Scan the chunks of one value that hold the parts wanted of it. */
static void
scan_value(Relation toastrel, Relation index, Snapshot snapshot,
		   ValueRead *v)
{
	ScanKeyData keys[3];
	int			nkeys = 1;
	SysScanDesc scan;
	HeapTuple	tuple;

	ScanKeyInit(&keys[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(v->valueid));
	if (v->first_chunk > 0)
		ScanKeyInit(&keys[nkeys++], (AttrNumber) 2,
					BTGreaterEqualStrategyNumber, F_INT4GE,
					Int32GetDatum(v->first_chunk));
	/* up to the value's last chunk, an extra chunk shows */
	if (v->last_chunk < v->nchunks - 1)
		ScanKeyInit(&keys[nkeys++], (AttrNumber) 2,
					BTLessEqualStrategyNumber, F_INT4LE,
					Int32GetDatum(v->last_chunk));
	v->next_chunk = v->first_chunk;
	scan = systable_beginscan_ordered(toastrel, index, snapshot, nkeys, keys);
	while ((tuple = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
		take_next_chunk(toastrel, v, tuple);
	check_all_read(toastrel, v);
	systable_endscan_ordered(scan);
}

/* The value a chunk belongs to: values are sorted by value id. */
static ValueRead *
find_value(ValueRead **values, uint32 n, Oid valueid)
{
	uint32		lo = 0;
	uint32		hi = n;

	while (lo < hi)
	{
		uint32		mid = lo + (hi - lo) / 2;

		if (values[mid]->valueid < valueid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && values[lo]->valueid == valueid ? values[lo] : NULL;
}

/* Scan the chunks of several values read whole, all at once. */
static void
scan_whole_values(Relation toastrel, Relation index, Snapshot snapshot,
				  ValueRead **values, uint32 n)
{
	Datum	   *ids = palloc(n * sizeof(Datum));
	ArrayType  *idarray;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	TupleDesc	tupdesc = RelationGetDescr(toastrel);

	for (uint32 i = 0; i < n; i++)
	{
		ids[i] = ObjectIdGetDatum(values[i]->valueid);
		values[i]->next_chunk = 0;
	}
	idarray = construct_array(ids, (int) n, OIDOID, sizeof(Oid), true,
							  TYPALIGN_INT);
	ScanKeyEntryInitialize(&key, SK_SEARCHARRAY, (AttrNumber) 1,
						   BTEqualStrategyNumber, InvalidOid, InvalidOid,
						   F_OIDEQ, PointerGetDatum(idarray));
	scan = systable_beginscan_ordered(toastrel, index, snapshot, 1, &key);
	while ((tuple = systable_getnext_ordered(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		Oid			valueid = DatumGetObjectId(fastgetattr(tuple, 1, tupdesc, &isnull));
		ValueRead  *v = find_value(values, n, valueid);

		if (v == NULL)
			elog(ERROR, "index scan returned toast value %u, not asked for",
				 valueid);
		take_next_chunk(toastrel, v, tuple);
	}
	for (uint32 i = 0; i < n; i++)
		check_all_read(toastrel, values[i]);
	systable_endscan_ordered(scan);
	pfree(idarray);
	pfree(ids);
}

/*
 * Scan the chunks of every value, into their parts' .stored or .raw: the
 * values read whole in one scan, the others one scan each.  values[] is
 * sorted by value id.
 */
static void
scan_chunks(Oid toastrelid, ValueRead *values, uint32 nvalues)
{
	Relation	toastrel;
	Relation   *toastidxs;
	int			num_indexes;
	int			valid_index;
	SnapshotData toast_snapshot pg_attribute_unused();	/* before 18 */
	Snapshot	snapshot;
	ValueRead **whole = palloc(nvalues * sizeof(ValueRead *));
	uint32		nwhole = 0;

	toastrel = table_open(toastrelid, AccessShareLock);
	valid_index = toast_open_indexes(toastrel, AccessShareLock, &toastidxs,
									 &num_indexes);
	snapshot = jt_get_toast_snapshot(&toast_snapshot);
	for (uint32 i = 0; i < nvalues; i++)
	{
		if (read_whole(&values[i]))
			whole[nwhole++] = &values[i];
		else
			scan_value(toastrel, toastidxs[valid_index], snapshot, &values[i]);
	}
	/* one value id: a plain equality, as core's, spares the array keys */
	if (nwhole == 1)
		scan_value(toastrel, toastidxs[valid_index], snapshot, whole[0]);
	else if (nwhole > 1)
		scan_whole_values(toastrel, toastidxs[valid_index], snapshot, whole,
						  nwhole);
	/* the locks stay until the end of the transaction, as the iterator's */
	toast_close_indexes(toastidxs, num_indexes, NoLock);
	table_close(toastrel, NoLock);
	pfree(whole);
}

/*
 * Decompress a part stored compressed (stored: PostgreSQL's in-memory
 * compressed form, its stream starting with the raw size and the method as
 * core writes it) into raw, which has room for range->rawsize bytes; raw
 * gets a 4-byte header.  How: see decompress_stream().
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

	/*
	 * pglz by the project's decoder, which accepts exactly what core's
	 * pglz_decompress() does and copies short back-references faster.  lz4
	 * as core decodes a TOAST value, by liblz4, which is faster than a
	 * decoder that can stop and resume; ours then only says why a stream
	 * is corrupt.  liblz4 also lets through streams no compressor writes (a
	 * match at distance 0 copies bytes not yet written, see decode_lz4.c),
	 * so its output counts only when it hashes as the directory says the
	 * part's content does; such a stream's never does (and parts of formats
	 * that hashed otherwise go to ours).
	 */
#ifdef JT_HAVE_LIBLZ4
	if (method == JT_DECODE_LZ4 &&
		LZ4_decompress_safe(stream + sizeof(uint32), VARDATA(raw),
							extsize - sizeof(uint32), rawlen) == rawlen &&
		jt_part_hash(JT_SKELETON_VERSION_LATEST, VARDATA(raw), rawlen) ==
		range->hash)
		return;
#endif
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
 * The raw size a compression unit's stream header (at stream) gives,
 * checked: the method its parts name (first is one of them), at most what
 * a unit holds, and at least upto, where the parts read from it end.
 */
static uint32
unit_header_raw_size(const char *stream, const JtPartEntry *first,
					 uint32 upto, Oid toastrelid)
{
	uint32		info;
	uint32		unit_raw;

	memcpy(&info, stream, sizeof(uint32));
	unit_raw = info & VARLENA_EXTSIZE_MASK;
	if ((info >> VARLENA_EXTSIZE_BITS) != (first->extinfo >> VARLENA_EXTSIZE_BITS))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						first->valueid, get_rel_name(toastrelid)),
				 errdetail("Its compression method is not the one its parts name.")));
	if (unit_raw > JT_UNIT_MAX_RAW)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						first->valueid, get_rel_name(toastrelid)),
				 errdetail("Its compression unit claims %u bytes, more than a unit holds.",
						   unit_raw)));
	if (upto > unit_raw)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						first->valueid, get_rel_name(toastrelid)),
				 errdetail("Its compression unit holds %u bytes, fewer than its parts need (%u).",
						   unit_raw, upto)));
	return unit_raw;
}

/* The decoder of a unit part's method (checked by unit_header_raw_size()). */
static inline JtDecodeMethod
unit_method(const JtPartEntry *range)
{
	return (range->extinfo >> VARLENA_EXTSIZE_BITS) == TOAST_PGLZ_COMPRESSION_ID ?
		JT_DECODE_PGLZ : JT_DECODE_LZ4;
}

/*
 * The part of range as a datum, cut from its unit's raw bytes, where it
 * starts at from.  Its bytes must hash as its entry says (unless the
 * caller has just found they do: hashed): a unit's parts are told apart by
 * where they start, which nothing else would check when a part of the same
 * kind and count starts there too.
 */
static struct varlena *
unit_part_datum(const JtPartEntry *range, const char *from, Oid toastrelid,
				bool hashed)
{
	uint32		len = range->rawsize - VARHDRSZ;
	struct varlena *raw;

	if (!hashed &&
		jt_part_hash(JT_SKELETON_VERSION_UNITS, from, len) != range->hash)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("A part cut from its compression unit in toast value %u in %s is not the one its entry describes.",
						   range->valueid, get_rel_name(toastrelid))));
	raw = palloc(range->rawsize);
	SET_VARSIZE(raw, range->rawsize);
	memcpy(VARDATA(raw), from, len);
	return raw;
}

/*
 * Decode a compression unit (its stored bytes, extsize of them, at
 * stream; first names a part of it, for errors) into cache->raw, from its
 * start as far as upto bytes, or wholly.
 *
 * pglz by the project's decoder, which accepts exactly what core's
 * pglz_decompress() does and is faster; lz4 by liblz4 when the server has
 * it, whose output is then checked part by part as it is cut (cut_part()):
 * liblz4 follows streams no compressor writes (see decompress_stream()).
 * Else, or when that check fails, by the project's decoder, which says
 * why a stream is corrupt.
 */
static void
decode_unit(JtUnitCache *cache, const char *stream, void *alloc,
			int32 extsize, const JtPartEntry *first, uint32 upto, bool whole,
			Oid toastrelid, bool strict)
{
	uint32		unit_raw;
	const char *in = stream + sizeof(uint32);
	uint32		inlen;
	bool		done = false;

	if (extsize < (int32) sizeof(uint32))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						first->valueid, get_rel_name(toastrelid)),
				 errdetail("It is shorter than its header.")));
	inlen = extsize - sizeof(uint32);
	unit_raw = unit_header_raw_size(stream, first, upto, toastrelid);
	if (whole)
		upto = unit_raw;
	if (cache->cxt == NULL)
		cache->cxt = CurrentMemoryContext;

	cache->method = unit_method(first);
	/* room for the whole unit: lz4's rules on how a block ends need it */
	if (cache->raw_cap < Max(unit_raw, 1))
	{
		if (cache->raw)
			pfree(cache->raw);
		cache->raw = MemoryContextAlloc(cache->cxt, Max(unit_raw, 1));
		cache->raw_cap = Max(unit_raw, 1);
	}
	cache->decoded = 0;
	cache->checked = true;
#ifdef JT_HAVE_LIBLZ4
	if (cache->method == JT_DECODE_LZ4 && !strict)
	{
		int			got = upto == unit_raw ?
			LZ4_decompress_safe(in, cache->raw, inlen, upto) :
			LZ4_decompress_safe_partial(in, cache->raw, inlen, upto, unit_raw);

		done = got >= (int) upto;
		cache->checked = false;
	}
#endif
	if (!done)
	{
		JtDecoder	dec;
		const char *error = NULL;
		bool		ok;

		cache->checked = true;
		if (upto == unit_raw)
			ok = jt_decode_all(cache->method, in, inlen, cache->raw, upto,
							   &error) == (int32) upto;
		else
		{
			jt_decoder_init(&dec, cache->method, cache->raw, unit_raw, in, inlen);
			jt_decoder_add_input(&dec, in, inlen);
			ok = jt_decode(&dec, upto) != JT_DECODE_CORRUPT &&
				dec.out_len >= upto;
			error = dec.error;
		}
		if (!ok)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("compressed %s data of toast value %u in %s is corrupt",
							cache->method == JT_DECODE_PGLZ ? "pglz" : "lz4",
							first->valueid, get_rel_name(toastrelid)),
					 errdetail("%s.", error ? error : "It ends before its raw size")));
	}
	cache->decoded = upto;
	cache->toastrelid = toastrelid;
	cache->valueid = first->valueid;
	cache->stored_offset = jt_entry_stored_offset(first);
	cache->extinfo = first->extinfo;
	/*
	 * The stream, for the strict decoder should liblz4's output fail: the
	 * caller's allocation (alloc, holding it), which the cache frees when
	 * given another or released.
	 */
	if (!cache->checked && stream != cache->stream)
	{
		if (cache->stream_alloc)
			pfree(cache->stream_alloc);
		cache->stream = stream;
		cache->stream_alloc = alloc;
	}
}

/* Does the cache hold the unit of range, decoded as far as its part ends? */
static bool
unit_cached(const JtUnitCache *cache, const JtPartEntry *range,
			Oid toastrelid)
{
	return cache->decoded > 0 && cache->toastrelid == toastrelid &&
		cache->valueid == range->valueid &&
		cache->stored_offset == jt_entry_stored_offset(range) &&
		cache->extinfo == range->extinfo &&
		(uint64) jt_entry_unit_raw_offset(range) + range->rawsize - VARHDRSZ <=
		cache->decoded;
}

/*
 * The part of range cut from its unit, which the cache holds decoded far
 * enough (unit_cached()), and checked (unit_part_datum()).
 */
static struct varlena *
cut_part(JtUnitCache *cache, const JtPartEntry *range, Oid toastrelid)
{
	uint32		len = range->rawsize - VARHDRSZ;
	bool		hashed = false;

	Assert(unit_cached(cache, range, toastrelid));
	/* liblz4's output may not be the unit: the strict decoder's is */
	if (!cache->checked)
	{
		hashed = jt_part_hash(JT_SKELETON_VERSION_UNITS,
							  cache->raw + jt_entry_unit_raw_offset(range),
							  len) == range->hash;
		if (!hashed)
			decode_unit(cache, cache->stream, cache->stream_alloc,
						(int32) jt_entry_extsize(range), range, cache->decoded,
						false, toastrelid, true);
	}
	return unit_part_datum(range, cache->raw + jt_entry_unit_raw_offset(range),
						   toastrelid, hashed);
}

/* A cache that holds nothing (as a zeroed one). */
void
jt_unit_cache_init(JtUnitCache *cache)
{
	memset(cache, 0, sizeof(JtUnitCache));
}

void
jt_unit_cache_release(JtUnitCache *cache)
{
	if (cache->raw)
		pfree(cache->raw);
	if (cache->stream_alloc)
		pfree(cache->stream_alloc);
	memset(cache, 0, sizeof(JtUnitCache));
}

/*
 * The parts wanted of one compression unit (ranges[wanted[0 .. n-1]], all
 * naming the unit whose stored bytes, extsize of them, are at stream): the
 * unit is decoded once, as far as the last of them ends (wholly when a
 * cache keeps it for the parts asked for next), and each is cut out into
 * raws[wanted[i]].  A cache that needs the stream again takes over alloc,
 * the caller's allocation holding it, and then true is returned; with
 * alloc NULL, it borrows the stream, which must then outlive it.
 */
static bool
cut_from_unit(const char *stream, void *alloc, int32 extsize,
			  const JtPartEntry *ranges, const uint32 *wanted, uint32 n,
			  Oid toastrelid, struct varlena **raws, JtUnitCache *cache)
{
	JtUnitCache local;
	JtUnitCache *c = cache ? cache : &local;
	uint32		upto = 0;
	bool		kept;

	if (cache == NULL)
		jt_unit_cache_init(&local);
	for (uint32 i = 0; i < n; i++)
	{
		const JtPartEntry *range = &ranges[wanted[i]];

		upto = Max(upto, jt_entry_unit_raw_offset(range) +
				   (uint32) range->rawsize - VARHDRSZ);
	}
	decode_unit(c, stream, alloc, extsize, &ranges[wanted[0]], upto,
				cache != NULL, toastrelid, false);
	for (uint32 i = 0; i < n; i++)
		raws[wanted[i]] = cut_part(c, &ranges[wanted[i]], toastrelid);
	/* the stream is the cache's now, or the caller's still */
	kept = c->stream_alloc == alloc && alloc != NULL;
	if (cache == NULL)
	{
		local.stream_alloc = NULL;
		jt_unit_cache_release(&local);
		kept = false;
	}
	return kept;
}

/*
 * The fields of a unit part's entry that the code cutting it relies on
 * (jt_skeleton_read_ref() checks them too, for the entries it reads).
 */
static void
check_unit_entry(const JtPartEntry *range)
{
	if (jt_entry_in_unit(range) &&
		(range->rawsize < (int32) (VARHDRSZ + sizeof(uint32)) ||
		 jt_entry_unit_index(range) >= jt_entry_unit_count(range) ||
		 jt_entry_unit_count(range) > jt_entry_extsize(range) ||
		 (uint64) jt_entry_unit_raw_offset(range) + range->rawsize - VARHDRSZ >
		 JT_UNIT_MAX_RAW))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("A part's compression unit in toast value %u is impossible.",
						   range->valueid)));
}

/*
 * The fields of an entry that reading what it names relies on: stored in
 * no more bytes than it holds (a part on its own), within its value, and
 * a unit part's fields.
 */
void
jt_check_stored_entry(const JtPartEntry *range)
{
	if (!jt_entry_in_unit(range) &&
		(int32) jt_entry_extsize(range) > range->rawsize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The part in toast value %u is stored in more bytes than it holds.",
						   range->valueid)));
	if ((uint64) jt_entry_stored_offset(range) + jt_entry_extsize(range) >
		range->value_size ||
		range->value_size > VARLENA_EXTSIZE_MASK ||
		jt_entry_unit_index(range) > range->offset)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("A part lies outside toast value %u.",
						   range->valueid)));
	check_unit_entry(range);
}

/* Order part numbers by where what they are read from is stored. */
static int
wanted_location_cmp(const void *a, const void *b, void *arg)
{
	const JtPartEntry *ranges = (const JtPartEntry *) arg;
	const JtPartEntry *x = &ranges[*(const uint32 *) a];
	const JtPartEntry *y = &ranges[*(const uint32 *) b];
	uint32		xs = jt_entry_stored_offset(x);
	uint32		ys = jt_entry_stored_offset(y);

	if (x->valueid != y->valueid)
		return x->valueid < y->valueid ? -1 : 1;
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return (x->offset > y->offset) - (x->offset < y->offset);
}

/*
 * Read parts first .. first + n - 1, whose directory entries are
 * ranges[], from the TOAST relation: one index scan per TOAST value they
 * lie in, over the chunks that hold them.  A compressed part is
 * decompressed unless keep_compressed; a part of a compression unit always
 * is, its unit once for all the parts wanted of it, or not at all when the
 * unit cache (if given) holds it already.
 */
static void
fetch_stored_parts(uint32 n, const JtPartEntry *ranges, Oid toastrelid,
				   struct varlena **raws, bool *should_free,
				   bool keep_compressed, JtUnitCache *cache)
{
	uint32	   *order;
	uint32		norder = 0;
	PartRead   *parts;
	uint32		nreads = 0;
	ValueRead  *values;
	uint32		nvalues = 0;

	for (uint32 i = 0; i < n; i++)
		should_free[i] = true;

	for (uint32 i = 0; i < n; i++)
		jt_check_stored_entry(&ranges[i]);

	/*
	 * What to read: each part's stored bytes, or its unit's once, unless the
	 * cache has the unit.
	 */
	order = palloc(Max(n, 1) * sizeof(uint32));
	for (uint32 i = 0; i < n; i++)
	{
		if (cache != NULL && jt_entry_in_unit(&ranges[i]) &&
			unit_cached(cache, &ranges[i], toastrelid))
			raws[i] = cut_part(cache, &ranges[i], toastrelid);
		else
			order[norder++] = i;
	}
	qsort_arg(order, norder, sizeof(uint32), wanted_location_cmp,
			  (void *) ranges);
	parts = palloc(Max(norder, 1) * sizeof(PartRead));
	for (uint32 k = 0; k < norder; k++)
	{
		const JtPartEntry *range = &ranges[order[k]];
		PartRead   *prev = nreads > 0 ? &parts[nreads - 1] : NULL;

		if (prev != NULL && prev->valueid == range->valueid &&
			prev->offset == (int32) jt_entry_stored_offset(range))
		{
			const JtPartEntry *last = &ranges[order[k - 1]];

			if (!jt_entry_in_unit(range) || !jt_entry_in_unit(prev->range) ||
				last->offset == range->offset ||
				range->extinfo != prev->range->extinfo ||
				range->value_size != prev->range->value_size)
			{
				/* two entries name one part (no bug of ours writes that) */
				pfree(parts);
				pfree(order);
				for (uint32 j = 0; j < n; j++)
					raws[j] = jt_read_part(&ranges[j], toastrelid);
				return;
			}
			prev->nwanted++;
			continue;
		}
		parts[nreads].valueid = range->valueid;
		parts[nreads].index = order[k];
		parts[nreads].range = range;
		parts[nreads].offset = (int32) jt_entry_stored_offset(range);
		parts[nreads].extsize = (int32) jt_entry_extsize(range);
		parts[nreads].wanted = &order[k];
		parts[nreads].nwanted = 1;
		nreads++;
	}

	/* the values they lie in */
	values = palloc(Max(nreads, 1) * sizeof(ValueRead));
	for (uint32 i = 0; i < nreads; i++)
	{
		PartRead   *part = &parts[i];
		ValueRead  *v;
		int32		first = part->offset / TOAST_MAX_CHUNK_SIZE;
		int32		last = part->extsize > 0 ?
			(part->offset + part->extsize - 1) / TOAST_MAX_CHUNK_SIZE : first;

		if (i > 0 && parts[i - 1].valueid == part->valueid)
		{
			v = &values[nvalues - 1];
			if ((int32) part->range->value_size != v->value_size)
			{
				/* one value, two sizes (no bug of ours writes that) */
				pfree(values);
				pfree(parts);
				pfree(order);
				for (uint32 j = 0; j < n; j++)
					raws[j] = jt_read_part(&ranges[j], toastrelid);
				return;
			}
			v->last_chunk = Max(v->last_chunk, last);
			v->nparts++;
			continue;
		}
		v = &values[nvalues++];
		v->valueid = part->valueid;
		v->value_size = (int32) part->range->value_size;
		v->nchunks = v->value_size > 0 ?
			(v->value_size - 1) / TOAST_MAX_CHUNK_SIZE + 1 : 0;
		v->first_chunk = first;
		v->last_chunk = last;
		v->parts = part;
		v->nparts = 1;
	}

	for (uint32 i = 0; i < nreads; i++)
	{
		PartRead   *part = &parts[i];

		part->stored = NULL;
		part->raw = NULL;
		if (jt_stored_compressed(part->range) && !keep_compressed &&
			!jt_entry_in_unit(part->range) && part->extsize > 0 &&
			part->offset / TOAST_MAX_CHUNK_SIZE ==
			(part->offset + part->extsize - 1) / TOAST_MAX_CHUNK_SIZE)
			part->raw = palloc(part->range->rawsize);
		else
			part->stored = palloc(part->extsize + VARHDRSZ);
	}

	scan_chunks(toastrelid, values, nvalues);

	for (uint32 i = 0; i < nreads; i++)
	{
		PartRead   *part = &parts[i];
		const JtPartEntry *range = part->range;

		if (jt_entry_in_unit(range))
		{
			if (!cut_from_unit(VARDATA(part->stored), part->stored,
							   part->extsize, ranges, part->wanted,
							   part->nwanted, toastrelid, raws, cache))
				pfree(part->stored);
		}
		else if (part->raw != NULL)
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
	pfree(values);
	pfree(parts);
	pfree(order);
}

/*
 * Part fetcher: every part comes back decompressed.  arg: a unit cache
 * (jt_unit_cache_init()), or NULL.
 */
void
jt_fetch_stored_parts(void *arg, uint32 first, uint32 n,
					  const JtPartEntry *ranges, Oid toastrelid,
					  struct varlena **raws, bool *should_free)
{
	fetch_stored_parts(n, ranges, toastrelid, raws, should_free, false,
					   (JtUnitCache *) arg);
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
	fetch_stored_parts(n, ranges, toastrelid, raws, should_free, true,
					   (JtUnitCache *) arg);
}

/*
 * Check that value, a TOAST value as logical decoding rebuilds one, holds
 * the bytes range's entry says: a part that is the whole value may be
 * stored compressed; a value packing parts is stored as it is.
 */
static void
check_value_size(const JtPartEntry *range, struct varlena *value)
{
	if (jt_entry_is_whole_value(range) ?
		VARSIZE_ANY_EXHDR(value) != range->value_size :
		(VARATT_IS_EXTENDED(value) ||
		 VARSIZE(value) - VARHDRSZ != range->value_size))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("Toast value %u holds %u bytes, not the %u its parts say.",
						   range->valueid, (uint32) VARSIZE_ANY_EXHDR(value),
						   range->value_size)));
}

/*
 * The raw content of a part of the TOAST value value, rebuilt whole as
 * logical decoding rebuilds one (compressed, when the value's pointer says
 * so, for a part that is a value on its own).  *should_free says whether
 * the result is a new allocation.
 */
struct varlena *
jt_part_from_value(const JtPartEntry *range, struct varlena *value,
				   Oid toastrelid, JtUnitCache *cache, bool *should_free)
{
	struct varlena *raw;

	if (jt_entry_is_whole_value(range))
	{
		raw = detoast_attr(value);
		*should_free = (raw != value);
		return raw;
	}
	check_value_size(range, value);
	*should_free = true;
	return jt_part_from_bytes(range, VARDATA(value) + jt_entry_stored_offset(range),
							  toastrelid, cache);
}

/*
 * The stored bytes of a part compressed alone (not in a unit): the
 * extinfo's size of them, its compressed stream as stored, where they lie
 * in value, its TOAST value as logical decoding rebuilds one (see
 * jt_part_from_value()).
 */
const char *
jt_part_stored_bytes(const JtPartEntry *range, struct varlena *value)
{
	Assert(!jt_entry_in_unit(range) && jt_stored_compressed(range));
	jt_check_stored_entry(range);
	check_value_size(range, value);
	return VARDATA_ANY(value) + jt_entry_stored_offset(range);
}

/*
 * The raw content of a part whose stored bytes (its directory entry's
 * extinfo's size of them: its own, or its unit's) are at bytes.  A unit
 * cache, if given, keeps the unit decoded for the next parts of it, the
 * bytes borrowed: they must outlive it.
 */
struct varlena *
jt_part_from_bytes(const JtPartEntry *range, const char *bytes,
				   Oid toastrelid, JtUnitCache *cache)
{
	int32		extsize = jt_entry_extsize(range);
	struct varlena *raw;

	check_unit_entry(range);
	if (jt_entry_in_unit(range))
	{
		uint32		only = 0;

		if (cache != NULL && unit_cached(cache, range, toastrelid))
			return cut_part(cache, range, toastrelid);
		cut_from_unit(bytes, NULL, extsize, range, &only, 1, toastrelid,
					  &raw, cache);
		return raw;
	}
	if (extsize > range->rawsize - VARHDRSZ)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupt jsonb_toaster value"),
				 errdetail("The part in toast value %u is stored in more bytes than it holds.",
						   range->valueid)));
	raw = palloc(range->rawsize);
	if (jt_stored_compressed(range))
		decompress_stream(bytes, extsize, range, toastrelid, raw);
	else
	{
		SET_VARSIZE(raw, extsize + VARHDRSZ);
		memcpy(VARDATA(raw), bytes, extsize);
	}
	return raw;
}

/*
 * One part of a compression unit, read as far as it ends: the unit's
 * chunks are fetched one after another, and decoded as they come, until
 * the part's end is decoded (the first part of a unit of 16 kB needs its
 * first chunk or two, where the unit takes up to eight).
 */
static struct varlena *
read_unit_part(const JtPartEntry *range, Oid toastrelid)
{
	uint32		extsize = jt_entry_extsize(range);
	uint32		len = range->rawsize - VARHDRSZ;
	uint32		upto = jt_entry_unit_raw_offset(range) + len;
	char	   *stored = palloc(Max(extsize, sizeof(uint32)));
	uint32		stored_len = 0;
	char	   *buf = NULL;
	JtDecoder	dec;
	JtToastIterator it;
	const char *data;
	int32		chunk_len;
	struct varlena *raw;

	jt_toast_iterator_begin_window(&it, toastrelid, range->valueid,
								   (int32) range->value_size,
								   (int32) jt_entry_stored_offset(range),
								   (int32) extsize);
	while ((buf == NULL || dec.out_len < upto) &&
		   jt_toast_iterator_next(&it, &data, &chunk_len))
	{
		if (chunk_len > (int32) (extsize - stored_len))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("corrupt jsonb_toaster value"),
					 errdetail("A compression unit in toast value %u in %s runs past its stored size.",
							   range->valueid, get_rel_name(toastrelid))));
		memcpy(stored + stored_len, data, chunk_len);
		stored_len += chunk_len;
		if (buf == NULL && stored_len >= sizeof(uint32))
		{
			uint32		unit_raw = unit_header_raw_size(stored, range, upto,
														toastrelid);

			/* the whole unit's room: lz4's rules on how a block ends need it */
			buf = palloc(Max(unit_raw, 1));
			jt_decoder_init(&dec, unit_method(range), buf, unit_raw,
							stored + sizeof(uint32), extsize - sizeof(uint32));
		}
		if (buf != NULL)
		{
			jt_decoder_add_input(&dec, stored + sizeof(uint32),
								 stored_len - sizeof(uint32));
			if (jt_decode(&dec, upto) == JT_DECODE_CORRUPT)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("compressed %s data of toast value %u in %s is corrupt",
								dec.method == JT_DECODE_PGLZ ? "pglz" : "lz4",
								range->valueid, get_rel_name(toastrelid)),
						 errdetail("%s.", dec.error)));
		}
	}
	jt_toast_iterator_end(&it);
	if (buf == NULL || dec.out_len < upto)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("compressed data of toast value %u in %s is corrupt",
						range->valueid, get_rel_name(toastrelid)),
				 errdetail("It ends before the part's end.")));
	raw = unit_part_datum(range, buf + jt_entry_unit_raw_offset(range),
						  toastrelid, false);
	pfree(buf);
	pfree(stored);
	return raw;
}

/* One part's raw content. */
struct varlena *
jt_read_part(const JtPartEntry *range, Oid toastrelid)
{
	struct varlena *raw;
	bool		should_free;

	if (jt_entry_in_unit(range))
	{
		jt_check_stored_entry(range);
		return read_unit_part(range, toastrelid);
	}
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
	JtPartEntry stored;
	const JtDelta *d;
	struct varlena *raw;
	struct varlena *content;

	if (skel->hdr.inline_parts)
	{
		raw = jt_skeleton_inline_part(skel, range);
		if (base)
			*base = raw;
		return raw;
	}
	stored = jt_stored_range(skel, range);
	d = jt_delta_for(skel, range);
	raw = jt_read_part(&stored, skel->hdr.toastrelid);

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
