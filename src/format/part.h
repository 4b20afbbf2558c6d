/*-------------------------------------------------------------------------
 *
 * part.h
 *	  One part of a skeleton (format.h): its content hash, layout byte and
 *	  checks, byte sources over memory, and copying a part's entries into a
 *	  container being written.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/part.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_H
#define JSONB_TOASTER_PART_H

#include "format/format.h"
#include "jsonb/jsonb_writer.h"

extern void jt_memory_source(JtSource *src, const char *data, uint32 len,
							 bool refs_allowed);
extern bool jt_root_header_ok(uint32 header);
extern uint32 jt_part_hash(uint32 version, const char *data, uint32 len);
extern uint8 jt_part_layout(JtSource *src, const JtNode *root);
extern void jt_part_check(JtSource *partsrc, const JtPartEntry *range,
						  int layout, const struct varlena *raw,
						  JtNode *root);
extern void jt_part_check_bytes(JtSource *partsrc, const JtPartEntry *range,
								int layout, const char *data, uint32 len,
								JtNode *root);
extern void jt_copy_entries(JtWriter *w, JtSource *src, const JtNode *root,
							uint32 first, uint32 count);
extern void jt_copy_entries_placed(JtWriter *w, JtSource *src,
								   const char *jentries, uint32 n,
								   uint32 datalen, uint32 shift);

#endif							/* JSONB_TOASTER_PART_H */
