/*-------------------------------------------------------------------------
 *
 * bytea_pointer.h
 *	  The pointers of the appendable bytea toaster.
 *
 * A stored value is one TOAST value: full chunks, JT_BYTEA_CHUNK bytes
 * each, numbered from 0 up, and the last, partly filled chunk (the
 * "tail"), numbered below 0.  An append adds full chunks after the others
 * and writes its tail as a new chunk, numbered below every chunk the value
 * has; the old row version keeps reading its own tail, and the full chunks
 * are shared.  The full chunks a pointer reads are given as runs of
 * sequence numbers, since an aborted append leaves chunks that a later one
 * should not number again (see docs/appendable-bytea.md); a byte's chunk
 * follows from its offset.  The row holds the pointer only, a few dozen
 * bytes, as standard TOAST's row holds its own.
 *
 * The pointer also names the chunks its newest write added and the
 * transaction that wrote them: a pointer held past the abort of the
 * transaction that made it (the chunks gone with VACUUM, their numbers
 * taken again by a later append) then fails to read as a standard TOAST
 * pointer to a removed value does, instead of reading the later bytes.
 *
 * An append made in memory (data || x on a stored value) is a second kind
 * of pointer, never stored: the stored pointer it extends, followed by the
 * appended bytes.  adopt() turns it into a stored pointer; anything else
 * reads it back whole.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_pointer.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_BYTEA_POINTER_H
#define JSONB_TOASTER_BYTEA_POINTER_H

#include "access/detoast.h"
#include "access/heaptoast.h"
#include "access/toast_custom.h"

#include "support/custom_pointer.h"

/*
 * The toaster's id in every pointer it writes, and its name.  See
 * JSONB_TOASTER_ID for the rule on ids: this one must never change either.
 */
#define BYTEA_TOASTER_ID			2
#define BYTEA_TOASTER_NAME			"bytea_appendable"

/*
 * va_version of a stored pointer, and of an append held in memory.  Version
 * 1 was written by development builds only, before any release, with other
 * chunk sizes; it is refused, not read.
 */
#define JT_BYTEA_STORED_VERSION		2
#define JT_BYTEA_DEV_VERSION		1
#define JT_BYTEA_APPEND_VERSION		128

/*
 * Runs a pointer may name: runs multiply only after aborted appends, and a
 * value with more is stored anew by its next append.  (Tails take numbers
 * down from -1; one of INT32_MIN is stored anew too.)
 */
#define JT_BYTEA_MAX_RUNS			32

/*
 * The bytes of a full chunk, signed so that arithmetic on offsets stays so.
 * Three chunk rows fill a page, where standard TOAST puts four
 * (TOAST_MAX_CHUNK_SIZE).  An append writes its old partial chunk again (up
 * to a chunk) and a chunk row and an index entry per full chunk: larger
 * chunks make the first dearer and the second cheaper, and for a large
 * append their sum is least near three chunks a page.
 */
#define JT_BYTEA_CHUNKS_PER_PAGE	3
#define JT_BYTEA_CHUNK \
	((int64) (MaximumBytesPerTuple(JT_BYTEA_CHUNKS_PER_PAGE) - \
			  MAXALIGN(SizeofHeapTupleHeader) - sizeof(Oid) - sizeof(int32) - \
			  VARHDRSZ))

/* A run of full chunks: sequence numbers first .. first + count - 1. */
typedef struct JtByteaRun
{
	int32		first;
	int32		count;
} JtByteaRun;

/* A stored pointer's payload, as stored (unaligned in the pointer). */
typedef struct JtByteaHeader
{
	Oid			toastrelid;		/* TOAST relation holding the chunks */
	Oid			valueid;		/* the TOAST value of the chunks */
	uint16		nruns;			/* runs that follow, at least one */
	uint16		taillen;		/* bytes of the tail chunk; 0: none */
	int32		tail_seq;		/* its number, below 0 */
	int32		last_first;		/* first full chunk the newest write
								 * added */
	TransactionId last_xid;		/* the transaction that wrote them and the
								 * tail */
} JtByteaHeader;

/* A stored pointer, parsed and checked. */
typedef struct JtByteaValue
{
	Oid			toastrelid;
	Oid			valueid;
	int			nruns;
	JtByteaRun	runs[JT_BYTEA_MAX_RUNS];
	int32		taillen;		/* 0: no tail chunk */
	int32		tail_seq;
	int32		last_first;		/* full chunks from this number on, and the
								 * tail, ... */
	TransactionId last_xid;		/* ... were written by this transaction */
	int64		chunk_bytes;	/* bytes in the runs' chunks */
	int64		size;			/* chunk_bytes + taillen: the value's bytes */
} JtByteaValue;

/* Is attr a pointer of this toaster (stored or in memory)? */
static inline bool
jt_bytea_is_pointer(const struct varlena *attr)
{
	return VARATT_IS_EXTERNAL_CUSTOM(attr) &&
		custom_toaster_id(attr) == BYTEA_TOASTER_ID;
}

extern bool jt_bytea_is_append(const struct varlena *attr);
extern void jt_bytea_parse(const struct varlena *attr, JtByteaValue *value);
extern struct varlena *jt_bytea_make_pointer(const JtByteaValue *value);
extern void jt_bytea_parse_append(const struct varlena *attr,
								  const struct varlena **base,
								  const char **appended, int64 *appended_len);
extern struct varlena *jt_bytea_make_append(const struct varlena *base,
											const char *appended1,
											int64 len1,
											const char *appended2,
											int64 len2);

#endif							/* JSONB_TOASTER_BYTEA_POINTER_H */
