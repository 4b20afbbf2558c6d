/*-------------------------------------------------------------------------
 *
 * decode_lz4.h
 *	  The resumable decoder of the lz4 block format (decode.h).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode_lz4.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DECODE_LZ4_H
#define JSONB_TOASTER_DECODE_LZ4_H

#include "decode/decoder.h"

extern JtDecodeStatus jt_decode_lz4(JtDecoder *dec, uint32 target);

#endif							/* JSONB_TOASTER_DECODE_LZ4_H */
