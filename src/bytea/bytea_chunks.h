/*-------------------------------------------------------------------------
 *
 * bytea_chunks.h
 *	  The chunks of an appendable bytea's TOAST value: read, add, delete.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/bytea/bytea_chunks.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_BYTEA_CHUNKS_H
#define JSONB_TOASTER_BYTEA_CHUNKS_H

#include "utils/rel.h"

#include "bytea/bytea_pointer.h"

extern void jt_bytea_read(const JtByteaValue *value, int64 offset,
						  int64 length, char *dest);
extern bool jt_bytea_free_seqs(Relation rel, Oid valueid, int32 *next_full,
							   int32 *next_tail);
extern Oid	jt_bytea_new_value(Relation rel, Oid *toastrelid);
extern void jt_bytea_write(Relation rel, Oid valueid, const char *data,
						   int32 first_seq, int32 nfull, int32 tail_seq,
						   int32 taillen, int options);
extern void jt_bytea_delete_chunks(Relation rel, const JtByteaValue *value,
								   bool only_tail, bool is_speculative);

#endif							/* JSONB_TOASTER_BYTEA_CHUNKS_H */
