/*-------------------------------------------------------------------------
 *
 * part_compress.h
 *	  Compression of the parts the toaster writes (patched servers only).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/toaster/part_compress.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_PART_COMPRESS_H
#define JSONB_TOASTER_PART_COMPRESS_H

extern struct varlena *jt_compress_part(const struct varlena *raw,
										char cmethod);

#endif							/* JSONB_TOASTER_PART_COMPRESS_H */
