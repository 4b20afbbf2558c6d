/*-------------------------------------------------------------------------
 *
 * decoder.h
 *	  The state of a resumable decoder (decode.h), shared by the pglz and
 *	  lz4 decoders.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decoder.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_DECODER_H
#define JSONB_TOASTER_DECODER_H

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

/* How far past its end jt_copy_match_wild() may write. */
#define JT_WILD_COPY_SLACK	16

/*
 * jt_copy_match() where up to JT_WILD_COPY_SLACK bytes past the copy's end
 * may be written (the decoder overwrites them next): a source at least 16
 * bytes back is copied in 16-byte blocks, each read entirely from bytes
 * already written, so that a short copy is a load and a store rather
 * than a call.
 */
static inline void
jt_copy_match_wild(char *dst, uint32 off, uint32 len)
{
	const char *src = dst - off;
	char	   *end = dst + len;

	if (off < 16)
	{
		jt_copy_match(dst, off, len);
		return;
	}
	do
	{
		memcpy(dst, src, 16);
		dst += 16;
		src += 16;
	} while (dst < end);
}

#endif							/* JSONB_TOASTER_DECODER_H */
