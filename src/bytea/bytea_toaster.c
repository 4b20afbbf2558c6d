/*-------------------------------------------------------------------------
 *
 * bytea_toaster.c
 *	  The appendable bytea toaster: a bytea that only grows at its end
 *	  keeps its stored bytes, and an append writes only the new ones.
 *
 * A column opts in with ALTER TABLE .. ALTER COLUMN .. SET (toaster =
 * 'bytea_appendable').  toast() stores a value as full chunks of one TOAST
 * value plus a tail chunk of under a chunk's bytes; data || x on such a
 * value makes an append in memory (bytea_append.c), which adopt() stores
 * by adding to the same TOAST value the full chunks that tail || x fills
 * and a new tail chunk.  The old row version keeps reading its own chunks
 * and tail: full chunks are shared between the versions of a row, and no
 * chunk is ever changed.
 *
 * Ownership: the full chunks belong to the row's latest version, which
 * names the most of them; an earlier version names a prefix of its runs,
 * and a tail chunk of its own.  So delete() keeps the full chunks when
 * the replacement names the same value with at least the old ones, and
 * deletes the old tail chunk; otherwise it deletes every chunk the old
 * pointer names, as standard TOAST deletes a replaced value.
 *
 * The toaster has no get_parts: CLUSTER and VACUUM FULL read each value
 * back and store it anew, amcheck checks the row only, and in logically
 * logged tables the toaster leaves values to standard TOAST, so logical
 * decoding never meets its pointers.  Values are stored uncompressed, as
 * with STORAGE EXTERNAL, whatever the column's compression.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_toaster.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_custom.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "bytea/bytea_chunks.h"
#include "bytea/bytea_pointer.h"
#include "bytea/bytea_toaster.h"

static struct varlena *bytea_detoast(struct varlena *attr);
static struct varlena *bytea_detoast_slice(struct varlena *attr,
										   int32 sliceoffset,
										   int32 slicelength);
static struct varlena *bytea_toast(Relation rel, int attnum,
								   struct varlena *value,
								   struct varlena *oldvalue, int32 budget,
								   int options);
static struct varlena *bytea_adopt(Relation rel, int attnum,
								   struct varlena *value,
								   struct varlena *oldvalue);
static void bytea_delete(Relation rel, struct varlena *attr,
						 struct varlena *replacement, bool is_speculative);

static const CustomToasterRoutine bytea_toaster_routine = {
	.toaster_name = BYTEA_TOASTER_NAME,
	.detoast = bytea_detoast,
	.detoast_slice = bytea_detoast_slice,
	.toast = bytea_toast,
	.adopt = bytea_adopt,
	.delete = bytea_delete,
};

void
jt_bytea_toaster_init(void)
{
	if (process_shared_preload_libraries_in_progress)
		RegisterCustomToaster(BYTEA_TOASTER_ID, &bytea_toaster_routine);
}

/*
 * The bytes of an append in memory: its stored base (parsed into base)
 * and what was appended.  For a stored pointer, appended_len is 0.
 */
static void
open_value(struct varlena *attr, JtByteaValue *base, const char **appended,
		   int64 *appended_len)
{
	if (jt_bytea_is_append(attr))
	{
		const struct varlena *stored;

		jt_bytea_parse_append(attr, &stored, appended, appended_len);
		jt_bytea_parse(stored, base);
	}
	else
	{
		jt_bytea_parse(attr, base);
		*appended = NULL;
		*appended_len = 0;
	}
}

/* Copy bytes offset .. offset + length - 1 of base || appended to dest. */
static void
read_range(const JtByteaValue *base, const char *appended, int64 offset,
		   int64 length, char *dest)
{
	int64		from_base = Max(Min(base->size - offset, length), 0);

	if (from_base > 0)
		jt_bytea_read(base, offset, from_base, dest);
	if (length > from_base)
		memcpy(dest + from_base,
			   appended + (offset + from_base - base->size),
			   length - from_base);
}

static struct varlena *
bytea_detoast(struct varlena *attr)
{
	JtByteaValue base;
	const char *appended;
	int64		appended_len;
	int64		size;
	struct varlena *result;

	open_value(attr, &base, &appended, &appended_len);
	size = base.size + appended_len;
	if (size + VARHDRSZ > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bytea value of %lld bytes is too large",
						(long long) size)));
	result = palloc(size + VARHDRSZ);
	SET_VARSIZE(result, size + VARHDRSZ);
	read_range(&base, appended, 0, size, VARDATA(result));
	return result;
}

/* As detoast_attr_slice() slices a detoasted value, reading only the slice. */
static struct varlena *
bytea_detoast_slice(struct varlena *attr, int32 sliceoffset,
					int32 slicelength)
{
	JtByteaValue base;
	const char *appended;
	int64		appended_len;
	int64		size;
	int64		length;
	struct varlena *result;

	open_value(attr, &base, &appended, &appended_len);
	size = base.size + appended_len;
	if (sliceoffset >= size)
		length = 0;
	else if (slicelength < 0 || (int64) sliceoffset + slicelength > size)
		length = size - sliceoffset;
	else
		length = slicelength;
	result = palloc(length + VARHDRSZ);
	SET_VARSIZE(result, length + VARHDRSZ);
	if (length > 0)
		read_range(&base, appended, sliceoffset, length, VARDATA(result));
	return result;
}

/*
 * Store a bytea of at least one chunk: its full chunks as a new TOAST
 * value, numbered from 0, and the rest as its tail chunk, number -1.  Left
 * to standard TOAST: other types (a domain over bytea is bytea), values
 * under a chunk, and logically logged tables (see the file's header).
 */
static struct varlena *
bytea_toast(Relation rel, int attnum, struct varlena *value,
			struct varlena *oldvalue, int32 budget, int options)
{
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	struct varlena *raw;
	JtByteaValue stored = {0};
	struct varlena *result;
	int64		size;
	int32		nchunks;

	if (getBaseType(att->atttypid) != BYTEAOID ||
		!OidIsValid(rel->rd_rel->reltoastrelid) ||
		RelationIsLogicallyLogged(rel))
		return NULL;

	size = toast_raw_datum_size(PointerGetDatum(value)) - VARHDRSZ;
	nchunks = (int32) (size / JT_BYTEA_CHUNK);
	if (nchunks == 0)
		return NULL;

	raw = detoast_attr(value);
	stored.valueid = jt_bytea_new_value(rel, &stored.toastrelid);
	stored.nruns = 1;
	stored.runs[0].first = 0;
	stored.runs[0].count = nchunks;
	stored.chunk_bytes = nchunks * JT_BYTEA_CHUNK;
	stored.taillen = (int32) (size - stored.chunk_bytes);
	stored.tail_seq = stored.taillen > 0 ? -1 : 0;
	jt_bytea_write(rel, stored.valueid, VARDATA_ANY(raw), 0, nchunks,
				   stored.tail_seq, stored.taillen, options);
	stored.size = size;
	stored.last_first = 0;
	stored.last_xid = GetCurrentTransactionId();
	result = jt_bytea_make_pointer(&stored);

	/* an UPDATE of many rows offers one value per row: free each */
	if (raw != value)
		pfree(raw);
	return result;
}

/*
 * Store an append made in memory from oldvalue: add to oldvalue's TOAST
 * value the full chunks that oldvalue's tail and the appended bytes fill,
 * and the rest as a new tail chunk; oldvalue's tail chunk stays for the
 * old row version (delete() removes it once that version is replaced).
 * Anything else (another value, or an append to another row's value) is
 * read back and stored anew.
 */
static struct varlena *
bytea_adopt(Relation rel, int attnum, struct varlena *value,
			struct varlena *oldvalue)
{
	const struct varlena *base;
	const char *appended;
	int64		appended_len;
	JtByteaValue v;
	JtByteaRun *last;
	struct varlena *result;
	char	   *joined;
	int64		joined_len;
	int32		nfull;
	int32		taillen;
	int32		next_full;
	int32		next_tail;
	int32		end;

	if (!jt_bytea_is_append(value))
		return NULL;
	jt_bytea_parse_append(value, &base, &appended, &appended_len);
	if (VARSIZE_EXTERNAL(base) != VARSIZE_EXTERNAL(oldvalue) ||
		memcmp(base, oldvalue, VARSIZE_EXTERNAL(base)) != 0)
		return NULL;
	jt_bytea_parse(base, &v);
	if (v.toastrelid != rel->rd_rel->reltoastrelid)
		return NULL;

	joined_len = v.taillen + appended_len;
	nfull = (int32) (joined_len / JT_BYTEA_CHUNK);
	taillen = (int32) (joined_len % JT_BYTEA_CHUNK);
	last = &v.runs[v.nruns - 1];
	end = last->first + last->count;
	if (!jt_bytea_free_seqs(rel, v.valueid, &next_full, &next_tail))
		return NULL;			/* numbers ran out: stored anew */
	if (next_full < end)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("toast value %u in %s lacks chunks its pointer names",
						v.valueid, RelationGetRelationName(rel)),
				 errdetail_internal("The highest chunk is %d, the pointer names up to %d.",
									next_full - 1, end - 1)));
	if (nfull > 0 &&
		((int64) next_full + nfull - 1 > PG_INT32_MAX ||
		 (next_full != end && v.nruns == JT_BYTEA_MAX_RUNS)))
		return NULL;			/* numbers or runs ran out: stored anew */

	/* the old tail's bytes, then the appended ones */
	joined = palloc(joined_len);
	if (v.taillen > 0)
		jt_bytea_read(&v, v.chunk_bytes, v.taillen, joined);
	memcpy(joined + v.taillen, appended, appended_len);

	if (nfull > 0)
	{
		if (next_full == end)
			last->count += nfull;
		else
		{
			/* an aborted append wrote chunks there: number past them */
			v.runs[v.nruns].first = next_full;
			v.runs[v.nruns].count = nfull;
			v.nruns++;
		}
		v.last_first = next_full;
	}
	else
		v.last_first = end;
	jt_bytea_write(rel, v.valueid, joined, next_full, nfull, next_tail,
				   taillen, 0);
	v.last_xid = GetCurrentTransactionId();
	v.chunk_bytes += nfull * JT_BYTEA_CHUNK;
	v.taillen = taillen;
	v.tail_seq = taillen > 0 ? next_tail : 0;
	v.size = v.chunk_bytes + v.taillen;
	result = jt_bytea_make_pointer(&v);
	pfree(joined);
	return result;
}

/* Does newer name every chunk older does, in the same TOAST value? */
static bool
names_all_chunks_of(const JtByteaValue *newer, const JtByteaValue *older)
{
	int			last = older->nruns - 1;

	if (newer->toastrelid != older->toastrelid ||
		newer->valueid != older->valueid || newer->nruns < older->nruns)
		return false;
	for (int i = 0; i < last; i++)
	{
		if (newer->runs[i].first != older->runs[i].first ||
			newer->runs[i].count != older->runs[i].count)
			return false;
	}
	return newer->runs[last].first == older->runs[last].first &&
		newer->runs[last].count >= older->runs[last].count;
}

static void
bytea_delete(Relation rel, struct varlena *attr, struct varlena *replacement,
			 bool is_speculative)
{
	JtByteaValue old;

	jt_bytea_parse(attr, &old);
	if (replacement != NULL && jt_bytea_is_pointer(replacement) &&
		!jt_bytea_is_append(replacement))
	{
		JtByteaValue newer;

		jt_bytea_parse(replacement, &newer);
		if (names_all_chunks_of(&newer, &old))
		{
			/* the old tail chunk is the old version's alone */
			if (old.taillen > 0 &&
				(newer.taillen == 0 || newer.tail_seq != old.tail_seq))
				jt_bytea_delete_chunks(rel, &old, true, is_speculative);
			return;
		}
		/* only adopt() makes a pointer to the same value, and it extends */
		if (newer.toastrelid == old.toastrelid &&
			newer.valueid == old.valueid)
			elog(ERROR, "the replacement of toast value %u names fewer of its chunks",
				 old.valueid);
	}
	jt_bytea_delete_chunks(rel, &old, false, is_speculative);
}
