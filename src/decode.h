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
 * requested target, so both buffers may be enlarged (and moved) between
 * calls; jt_decoder_add_input() and jt_decoder_move_output() say where
 * they are now.
 *
 * These files include only c.h, so that they can be built without a
 * server for the fuzzers (fuzz/).  They report errors as status codes; the
 * callers turn them into ereport(ERROR).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DECODE_H
#define JSONB_TOASTER_DECODE_H

typedef enum JtDecodeMethod
{
	JT_DECODE_PGLZ,
	JT_DECODE_LZ4,
} JtDecodeMethod;

typedef enum JtDecodeStatus
{
	JT_DECODE_TARGET_REACHED,	/* at least the requested output exists */
	JT_DECODE_NEED_INPUT,		/* append input, then call again */
	JT_DECODE_FINISHED,			/* all input consumed, stream complete */
	JT_DECODE_CORRUPT,			/* see the decoder's error field */
} JtDecodeStatus;

typedef struct JtDecoder
{
	JtDecodeMethod method;

	/* output: the raw value, out_len bytes of it produced so far */
	char	   *out;
	uint32		out_cap;
	uint32		out_len;

	/* input: in_avail bytes present of in_total; in_pos consumed */
	const char *in;
	uint32		in_total;
	uint32		in_avail;
	uint32		in_pos;

	/* an interrupted literal run or match, resumed on the next call */
	uint32		literal_left;
	uint32		match_left;
	uint32		match_offset;

	/* pglz: the current control byte and how many of its items remain */
	uint8		ctrl;
	uint8		ctrl_left;

	/* lz4: the match of the current sequence is still to be parsed */
	bool		lz4_in_match_part;
	/* lz4: the current sequence is the last one (literals only) */
	bool		lz4_last;
	/* lz4: the token of the current sequence */
	uint8		lz4_token;

	/* static description of the first corruption found */
	const char *error;
} JtDecoder;

/*
 * Copy a back-reference: len bytes from distance "off" behind dst, where
 * the source may overlap the destination (a repeating pattern).  The
 * result is that of a byte-by-byte copy; overlapping copies are done with
 * memcpy() of doubling size, each from the start of the pattern.
 */
static inline void
jt_copy_match(char *dst, uint32 off, uint32 len)
{
	const char *src = dst - off;
	uint32		chunk = off;

	while (len > chunk)
	{
		memcpy(dst, src, chunk);
		dst += chunk;
		len -= chunk;
		chunk += chunk;
	}
	memcpy(dst, src, len);
}

extern void jt_decoder_init(JtDecoder *dec, JtDecodeMethod method,
							char *out, uint32 out_cap,
							const char *in, uint32 in_total);
extern void jt_decoder_add_input(JtDecoder *dec, const char *in,
								 uint32 in_avail);
extern void jt_decoder_move_output(JtDecoder *dec, char *out);
extern JtDecodeStatus jt_decode(JtDecoder *dec, uint32 target);

/* per-format steps, called by jt_decode() */
extern JtDecodeStatus jt_decode_pglz(JtDecoder *dec, uint32 target);
extern JtDecodeStatus jt_decode_lz4(JtDecoder *dec, uint32 target);

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
