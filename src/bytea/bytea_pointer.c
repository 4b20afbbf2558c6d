/*-------------------------------------------------------------------------
 *
 * bytea_pointer.c
 *	  Read and write the pointers of the appendable bytea toaster.
 *
 * A pointer read from a row is checked in full before anything follows
 * it: a damaged one raises ERRCODE_DATA_CORRUPTED, never reads past its
 * end or names chunks that do not add up to the size it gives.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_pointer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/transam.h"
#include "utils/memutils.h"

#include "bytea/bytea_pointer.h"

static void
corrupt_pointer(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid TOAST pointer of toaster \"%s\"",
					BYTEA_TOASTER_NAME),
			 errdetail_internal("%s", detail)));
}

static varatt_custom
pointer_header(const struct varlena *attr)
{
	varatt_custom header;

	Assert(jt_bytea_is_pointer(attr));
	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (header.va_size < VARHDRSZ_CUSTOM)
		corrupt_pointer("The pointer is shorter than its header.");
	return header;
}

/*
 * The payload of pointer attr and its length, if attr is of format version
 * version (what names the kind in the error otherwise).
 */
static const char *
checked_payload(const struct varlena *attr, uint8 version, const char *what,
				uint32 *len)
{
	varatt_custom header = pointer_header(attr);

	if (header.va_version == JT_BYTEA_DEV_VERSION &&
		version == JT_BYTEA_STORED_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("appendable bytea value of format version %u is not supported",
						header.va_version),
				 errdetail("Only development builds, before the first release, wrote that version."),
				 errhint("Remove the rows holding such values with TRUNCATE or DROP TABLE.")));
	if (header.va_version != version)
		corrupt_pointer(psprintf("Format version %u is not %s.",
								 header.va_version, what));
	*len = header.va_size - VARHDRSZ_CUSTOM;
	return VARDATA_CUSTOM(attr);
}

/* Is attr an append held in memory (not a stored value)? */
bool
jt_bytea_is_append(const struct varlena *attr)
{
	return pointer_header(attr).va_version == JT_BYTEA_APPEND_VERSION;
}

/* Parse and check a stored pointer. */
void
jt_bytea_parse(const struct varlena *attr, JtByteaValue *value)
{
	varatt_custom header;
	uint32		payload_len;
	const char *payload = checked_payload(attr, JT_BYTEA_STORED_VERSION,
										  "a stored value's", &payload_len);
	JtByteaHeader hdr;
	int64		expected_len;
	int64		next_free = 0;

	VARATT_CUSTOM_GET_HEADER(header, attr);
	if (payload_len < sizeof(JtByteaHeader))
		corrupt_pointer("The pointer is shorter than its payload's header.");
	memcpy(&hdr, payload, sizeof(hdr));
	if (hdr.nruns < 1 || hdr.nruns > JT_BYTEA_MAX_RUNS)
		corrupt_pointer(psprintf("It names %u runs of chunks.", hdr.nruns));
	if (hdr.taillen >= JT_BYTEA_CHUNK)
		corrupt_pointer(psprintf("Its tail of %u bytes would fill a chunk.",
								 hdr.taillen));
	expected_len = sizeof(JtByteaHeader) +
		(int64) hdr.nruns * sizeof(JtByteaRun);
	if (payload_len != expected_len)
		corrupt_pointer(psprintf("Its payload has %u bytes, not %lld.",
								 payload_len, (long long) expected_len));
	if (!OidIsValid(hdr.toastrelid) || !OidIsValid(hdr.valueid))
		corrupt_pointer("It names no TOAST value.");
	if (!TransactionIdIsNormal(hdr.last_xid))
		corrupt_pointer(psprintf("It names transaction %u as its chunks' writer.",
								 hdr.last_xid));

	value->toastrelid = hdr.toastrelid;
	value->valueid = hdr.valueid;
	value->nruns = hdr.nruns;
	memcpy(value->runs, payload + sizeof(JtByteaHeader),
		   hdr.nruns * sizeof(JtByteaRun));
	value->chunk_bytes = 0;
	for (int i = 0; i < value->nruns; i++)
	{
		const JtByteaRun *run = &value->runs[i];

		/* runs ascend without overlapping, so no chunk is read twice */
		if (run->count < 1 || run->first < next_free ||
			(int64) run->first + run->count - 1 > PG_INT32_MAX)
			corrupt_pointer(psprintf("Run %d (chunks %d, %d of them) is out of order.",
									 i, run->first, run->count));
		next_free = (int64) run->first + run->count;
		value->chunk_bytes += run->count * JT_BYTEA_CHUNK;
	}
	if (hdr.taillen > 0 && hdr.tail_seq >= 0)
		corrupt_pointer(psprintf("Its tail is chunk %d, not below 0.",
								 hdr.tail_seq));

	/*
	 * The newest write added full chunks at the end of the last run, or
	 * none and a tail.
	 */
	if (hdr.last_first < value->runs[value->nruns - 1].first ||
		hdr.last_first > next_free ||
		(hdr.last_first == next_free && hdr.taillen == 0))
		corrupt_pointer(psprintf("Its newest chunks start at %d, outside its last run.",
								 hdr.last_first));
	value->last_first = hdr.last_first;
	value->last_xid = hdr.last_xid;
	value->taillen = hdr.taillen;
	value->tail_seq = hdr.taillen > 0 ? hdr.tail_seq : 0;
	value->size = value->chunk_bytes + value->taillen;
	if (value->size + VARHDRSZ != header.va_rawsize ||
		value->size + VARHDRSZ > MaxAllocSize)
		corrupt_pointer(psprintf("Its chunks and tail hold %lld bytes, its header says %d.",
								 (long long) value->size,
								 header.va_rawsize - VARHDRSZ));
}

/* A stored pointer for value (palloc'd). */
struct varlena *
jt_bytea_make_pointer(const JtByteaValue *value)
{
	JtByteaHeader hdr = {0};
	Size		runs_len = value->nruns * sizeof(JtByteaRun);
	Size		size = VARHDRSZ_CUSTOM + sizeof(JtByteaHeader) + runs_len;
	struct varlena *result;
	char	   *at;

	Assert(value->nruns >= 1 && value->nruns <= JT_BYTEA_MAX_RUNS);
	Assert(value->taillen >= 0 && value->taillen < JT_BYTEA_CHUNK);
	Assert(value->size + VARHDRSZ <= MaxAllocSize);

	hdr.toastrelid = value->toastrelid;
	hdr.valueid = value->valueid;
	hdr.nruns = value->nruns;
	hdr.taillen = value->taillen;
	hdr.tail_seq = value->tail_seq;
	hdr.last_first = value->last_first;
	hdr.last_xid = value->last_xid;

	result = jt_custom_pointer_new(size, (int32) (value->size + VARHDRSZ),
								   (uint32) Min(size + value->size,
												(int64) PG_UINT32_MAX),
								   BYTEA_TOASTER_ID, JT_BYTEA_STORED_VERSION);
	at = VARDATA_CUSTOM(result);
	memcpy(at, &hdr, sizeof(hdr));
	at += sizeof(hdr);
	memcpy(at, value->runs, runs_len);
	return result;
}

/*
 * The parts of an append held in memory: the stored pointer it extends
 * and the bytes appended to it (both within attr).
 */
void
jt_bytea_parse_append(const struct varlena *attr, const struct varlena **base,
					  const char **appended, int64 *appended_len)
{
	uint32		payload_len;
	const char *payload = checked_payload(attr, JT_BYTEA_APPEND_VERSION,
										  "an append's", &payload_len);
	uint32		base_len;

	if (payload_len < sizeof(uint32))
		corrupt_pointer("The append is shorter than its header.");
	memcpy(&base_len, payload, sizeof(uint32));
	if (base_len < VARHDRSZ_CUSTOM ||
		base_len > payload_len - sizeof(uint32))
		corrupt_pointer("The append's base pointer does not fit it.");
	*base = (const struct varlena *) (payload + sizeof(uint32));
	if (!jt_bytea_is_pointer(*base) ||
		VARSIZE_EXTERNAL(*base) != base_len)
		corrupt_pointer("The append's base is not a pointer of its size.");
	*appended = payload + sizeof(uint32) + base_len;
	*appended_len = payload_len - sizeof(uint32) - base_len;
}

/*
 * An append held in memory: stored pointer base, then the bytes of
 * appended1 and of appended2 (either may be empty).  The caller checks
 * that the whole stays within a bytea's size.
 */
struct varlena *
jt_bytea_make_append(const struct varlena *base, const char *appended1,
					 int64 len1, const char *appended2, int64 len2)
{
	varatt_custom base_header;
	int32		rawsize;
	uint32		base_len = VARSIZE_EXTERNAL(base);
	Size		size = VARHDRSZ_CUSTOM + sizeof(uint32) + base_len +
		len1 + len2;
	struct varlena *result;
	char	   *at;

	VARATT_CUSTOM_GET_HEADER(base_header, base);
	Assert(base_header.va_version == JT_BYTEA_STORED_VERSION);
	Assert((int64) base_header.va_rawsize + len1 + len2 <= MaxAllocSize);

	/* pg_column_size() of a value in memory: its whole size, as stock's */
	rawsize = (int32) (base_header.va_rawsize + len1 + len2);
	result = jt_custom_pointer_new(size, rawsize, (uint32) rawsize,
								   BYTEA_TOASTER_ID, JT_BYTEA_APPEND_VERSION);
	at = VARDATA_CUSTOM(result);
	memcpy(at, &base_len, sizeof(uint32));
	at += sizeof(uint32);
	memcpy(at, base, base_len);
	at += base_len;
	if (len1 > 0)
		memcpy(at, appended1, len1);
	at += len1;
	if (len2 > 0)
		memcpy(at, appended2, len2);
	return result;
}
