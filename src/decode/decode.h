/*-------------------------------------------------------------------------
 *
 * decode.h
 *	  Resumable decoders for the two compressed formats TOAST uses: pglz and
 *	  the lz4 block format.
 *
 * A decoder turns compressed input into raw output in a caller-provided
 * buffer that holds the whole raw value.  It can be told to stop as soon as
 * a given number of output bytes exists, and it can run out of input at any
 * byte: it then reports that it needs more and resumes where it stopped
 * once the caller has appended input.  This is what lets a reader
 * decompress only the prefix of a document it needs, one TOAST chunk at a
 * time.
 *
 * The input is one contiguous buffer that only grows (the caller copies
 * chunks into it as they arrive); its final length is known up front from
 * the value's header.  The output buffer must hold what was produced so
 * far: back-references point into it.  Neither decoder writes past the
 * requested target (though the bytes between what it produced and the
 * target may be overwritten when it stops for input or finds corruption),
 * so both buffers may be enlarged (and moved) between calls;
 * jt_decoder_add_input() and jt_decoder_move_output() say where they are
 * now.
 *
 * These files include only c.h, so that they can be built without a
 * server for the fuzzers (fuzz/).  They report errors as status codes; the
 * callers turn them into ereport(ERROR).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DECODE_H
#define JSONB_TOASTER_DECODE_H

#include "decode/decoder.h"

extern void jt_decoder_init(JtDecoder *dec, JtDecodeMethod method,
							char *out, uint32 out_cap,
							const char *in, uint32 in_total);
extern void jt_decoder_add_input(JtDecoder *dec, const char *in,
								 uint32 in_avail);
extern void jt_decoder_move_output(JtDecoder *dec, char *out);
extern JtDecodeStatus jt_decode(JtDecoder *dec, uint32 target);

/* per-format steps, called by jt_decode() */

extern int32 jt_decode_finish(JtDecoder *dec, const char **error);

/*
 * Decode a whole value held in memory, as core's decompression does.
 * Returns the number of raw bytes produced, or -1 if the stream is corrupt
 * (then *error, if not NULL, describes why).
 */
extern int32 jt_decode_all(JtDecodeMethod method, const char *in,
						   uint32 in_len, char *out, uint32 out_cap,
						   const char **error);

#endif							/* JSONB_TOASTER_DECODE_H */
