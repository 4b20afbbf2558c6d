/*-------------------------------------------------------------------------
 *
 * decode_pglz.h
 *	  The resumable decoder of pglz (decode.h).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode_pglz.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DECODE_PGLZ_H
#define JSONB_TOASTER_DECODE_PGLZ_H

#include "decode/decoder.h"

extern JtDecodeStatus jt_decode_pglz(JtDecoder *dec, uint32 target);

#endif							/* JSONB_TOASTER_DECODE_PGLZ_H */
