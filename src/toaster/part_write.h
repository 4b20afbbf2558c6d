/*-------------------------------------------------------------------------
 *
 * part_write.h
 *	  Compression of the parts the toaster writes (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_write.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_WRITE_H
#define JSONB_TOASTER_PART_WRITE_H

#include "access/htup_details.h"
#include "catalog/pg_attribute.h"
#include "utils/relcache.h"
#include "varatt.h"

extern struct varlena *jt_compress_part(const struct varlena *raw,
										char cmethod);
extern char jt_column_compression(Form_pg_attribute att);
extern void jt_store_part(Relation rel, const struct varlena *raw,
						  char cmethod, bool compress, int options,
						  varatt_external *ext);

#endif							/* JSONB_TOASTER_PART_WRITE_H */
