/*-------------------------------------------------------------------------
 *
 * part_write.c
 *	  Writing the parts of a skeleton to TOAST, compressed with the
 *	  column's method (patched servers only).
 *
 * Parts are compressed with the column's method, in that method's standard
 * format: any server decompresses them.  For pglz the toaster uses its own
 * strategy, which gives up its search for a longer match sooner than
 * PGLZ_strategy_default does.  A part is a range of a few kB of jsonb, and
 * jsonb repeats short patterns (JEntries, keys that share digits, numeric
 * headers): there the default strategy walks long hash chains for matches
 * that are hardly longer.  Rewriting a part is most of the cost of a
 * partial update.  tools/pglz-strategy.sh measures the strategies on a
 * table's parts: U's come out 0.1% larger in a third of the time, I's 0.8%
 * larger in 0.9 of it (docs/toaster.md).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_write.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/toast_compression.h"
#include "access/toast_internals.h"
#include "utils/rel.h"
#include "common/pg_lzcompress.h"
#include "varatt.h"

#include "toaster/part_write.h"

/* the default strategy but for the two settings of its match search */
#define JT_PGLZ_MATCH_SIZE_GOOD		32
#define JT_PGLZ_MATCH_SIZE_DROP		20

static const PGLZ_Strategy *
part_strategy(void)
{
	static PGLZ_Strategy strategy;
	static bool done = false;

	if (!done)
	{
		strategy = *PGLZ_strategy_default;
		strategy.match_size_good = JT_PGLZ_MATCH_SIZE_GOOD;
		strategy.match_size_drop = JT_PGLZ_MATCH_SIZE_DROP;
		done = true;
	}
	return &strategy;
}

/*
 * A part compressed with pglz, as toast_compress_datum() would return it
 * but for the strategy; NULL when pglz does not make it smaller.
 */
static struct varlena *
compress_pglz(const struct varlena *raw)
{
	const PGLZ_Strategy *strategy = part_strategy();
	int32		rawlen = VARSIZE_ANY_EXHDR(raw);
	struct varlena *result;
	int32		len;

	if (rawlen < strategy->min_input_size || rawlen > strategy->max_input_size)
		return NULL;
	result = palloc(PGLZ_MAX_OUTPUT(rawlen) + VARHDRSZ_COMPRESSED);
	len = pglz_compress(VARDATA_ANY(raw), rawlen,
						(char *) result + VARHDRSZ_COMPRESSED, strategy);
	/* as TOAST does: worth it only if two bytes shorter at least */
	if (len < 0 || len + VARHDRSZ_COMPRESSED >= rawlen - 2)
	{
		pfree(result);
		return NULL;
	}
	SET_VARSIZE_COMPRESSED(result, len + VARHDRSZ_COMPRESSED);
	TOAST_COMPRESS_SET_SIZE_AND_COMPRESS_METHOD(result, rawlen,
												TOAST_PGLZ_COMPRESSION_ID);
	return result;
}

/*
 * A part compressed with method cmethod, or NULL to store it as it is
 * (compression would not make it smaller).
 */
struct varlena *
jt_compress_part(const struct varlena *raw, char cmethod)
{
	Datum		compressed;

	if (cmethod == TOAST_PGLZ_COMPRESSION)
		return compress_pglz(raw);
	compressed = toast_compress_datum(PointerGetDatum(raw), cmethod);
	return (struct varlena *) DatumGetPointer(compressed);
}

/* The compression method of a column's parts: its own, or the default. */
char
jt_column_compression(Form_pg_attribute att)
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
void
jt_store_part(Relation rel, const struct varlena *raw, char cmethod,
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
