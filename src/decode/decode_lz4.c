/*-------------------------------------------------------------------------
 *
 * decode_lz4.c
 *	  Resumable decoder for the lz4 block format, as TOAST stores it.
 *
 * TOAST keeps an lz4-compressed value as one raw lz4 block (no frame).  A
 * block is a series of sequences.  Each starts with a token byte: its high
 * nibble is the number of literal bytes that follow (15 means more length
 * bytes follow, each added, until one is not 255), its low nibble the match
 * length minus 4 (15: more length bytes after the offset).  After the
 * literals come a 2-byte little-endian distance back into the output and
 * the match length bytes; the match is copied from the output, possibly
 * overlapping itself.  The last sequence has literals only and ends the
 * block.
 *
 * The block format restricts where a block may end, and the reference
 * decoder (LZ4_decompress_safe, which core uses) rejects blocks that break
 * the restrictions.  This decoder checks the same conditions:
 *
 *	- a literal run that ends within the last 12 bytes of the output, or
 *	  whose end leaves fewer than 8 input bytes, must be the last sequence:
 *	  it must end exactly at the end of the input, inside the output;
 *	- a literal length's extra bytes must end more than 15 bytes before the
 *	  end of the input, a match length's at least 4 bytes before it;
 *	- a match must start inside the output produced so far and end at
 *	  least 5 bytes before the end of the output;
 *	- an empty output is valid only for the one-byte block 0x00.
 *
 * It is stricter than the reference in two corners the format calls
 * invalid but the reference's fast path lets through: a distance of 0, and
 * a sequence whose literals end fewer than 8 bytes before the end of the
 * input while more sequences follow.  No lz4 compressor produces either.
 *
 * The output of a valid block is the reference's, byte for byte.  The
 * decoder can stop inside a literal run or a match when the requested
 * output exists, and when the input runs short it resumes at the same
 * place once more is added.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode_lz4.c
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "decode/decode_lz4.h"

#define LZ4_MIN_MATCH		4
#define LZ4_LAST_LITERALS	5	/* the block ends with this many literals */
#define LZ4_MF_LIMIT		12	/* no match starts this close to the end */
#define LZ4_RUN_MASK		15

static inline JtDecodeStatus
lz4_corrupt(JtDecoder *dec, const char *why)
{
	dec->error = why;
	return JT_DECODE_CORRUPT;
}

/*
 * Read the extra length bytes starting at *pos.  Each byte read must leave
 * *pos at most "limit" (a position in the whole input).  Returns NEED_INPUT
 * without consuming anything when the bytes are not all present yet.
 */
static JtDecodeStatus
lz4_read_length(JtDecoder *dec, uint32 *pos, int64 limit, uint64 *length)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	uint32		p = *pos;
	unsigned char b;

	do
	{
		if (p >= dec->in_avail)
		{
			if (p >= dec->in_total)
				return lz4_corrupt(dec, "length bytes run past the end of the input");
			return JT_DECODE_NEED_INPUT;
		}
		b = in[p++];
		*length += b;
		if ((int64) p > limit)
			return lz4_corrupt(dec, "length bytes run too close to the end of the input");
		if (*length > PG_UINT32_MAX)
			return lz4_corrupt(dec, "length out of range");
	} while (b == 255);

	*pos = p;
	return JT_DECODE_TARGET_REACHED;
}

/* Parse a sequence's token and literal length, and check where it ends. */
static JtDecodeStatus
lz4_begin_sequence(JtDecoder *dec)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	uint32		p = dec->in_pos;
	unsigned char token;
	uint64		litlen;

	if (p >= dec->in_avail)
	{
		if (p >= dec->in_total)
			return lz4_corrupt(dec, "compressed data ends before its last sequence");
		return JT_DECODE_NEED_INPUT;
	}
	token = in[p++];
	litlen = token >> 4;
	if (litlen == LZ4_RUN_MASK)
	{
		int64		limit = (int64) dec->in_total - LZ4_RUN_MASK;
		JtDecodeStatus st;

		if ((int64) p >= limit)
			return lz4_corrupt(dec, "literal length runs too close to the end of the input");
		st = lz4_read_length(dec, &p, limit, &litlen);
		if (st != JT_DECODE_TARGET_REACHED)
			return st;
	}

	dec->lz4_last = false;
	if ((int64) (dec->out_len + litlen) > (int64) dec->out_cap - LZ4_MF_LIMIT ||
		(int64) (p + litlen) > (int64) dec->in_total - (2 + 1 + LZ4_LAST_LITERALS))
	{
		/* only the last sequence may end here, and it ends the block */
		if (p + litlen != dec->in_total || dec->out_len + litlen > dec->out_cap)
			return lz4_corrupt(dec, "last sequence does not end the block");
		dec->lz4_last = true;
	}
	dec->in_pos = p;
	dec->lz4_token = token;
	dec->literal_left = (uint32) litlen;
	dec->lz4_in_match_part = !dec->lz4_last;
	return JT_DECODE_TARGET_REACHED;
}

/* Parse a sequence's match distance and length. */
static JtDecodeStatus
lz4_begin_match(JtDecoder *dec)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	uint32		p = dec->in_pos;
	uint32		offset;
	uint64		matchlen = dec->lz4_token & LZ4_RUN_MASK;

	/* lz4_begin_sequence made sure these two bytes are in the input */
	if (dec->in_avail - p < 2)
		return JT_DECODE_NEED_INPUT;
	offset = in[p] | (in[p + 1] << 8);
	p += 2;
	if (matchlen == LZ4_RUN_MASK)
	{
		JtDecodeStatus st;

		st = lz4_read_length(dec, &p,
							 (int64) dec->in_total - LZ4_LAST_LITERALS + 1,
							 &matchlen);
		if (st != JT_DECODE_TARGET_REACHED)
			return st;
	}
	matchlen += LZ4_MIN_MATCH;

	if (offset == 0 || offset > dec->out_len)
		return lz4_corrupt(dec, "match distance reaches before the start of the output");
	if ((int64) (dec->out_len + matchlen) > (int64) dec->out_cap - LZ4_LAST_LITERALS)
		return lz4_corrupt(dec, "match runs into the last bytes of the output");

	dec->in_pos = p;
	dec->match_offset = offset;
	dec->match_left = (uint32) matchlen;
	dec->lz4_in_match_part = false;
	return JT_DECODE_TARGET_REACHED;
}

/*
 * The fast path: whole ordinary sequences (short literal run, short or long
 * match) while both the input and the requested output are far away, so
 * that no bound needs checking byte by byte and literals and matches can be
 * copied in fixed-size blocks that may run a little past their end (the
 * margins keep that inside both buffers, and the bytes past the end are
 * overwritten by what follows).  It leaves as soon as a sequence could be
 * the last one, could cross the target, or has a long literal run, for the
 * general code to handle; it checks exactly what that code checks.
 */
#define FAST_IN_MARGIN	32
#define FAST_OUT_MARGIN	64

/*
 * Copy len bytes in blocks of block bytes (16 or 8: a constant, so that
 * each memcpy is a fixed-size move), running up to block - 1 bytes past
 * the end; the margins keep that inside both buffers.  A block never
 * overlaps its source when the source lies at least a block behind, so
 * matches at such distances are copied correctly, each block reading
 * bytes the previous ones wrote.
 */
static inline void
copy_blocks(unsigned char *dst, const unsigned char *src, uint64 len,
			size_t block)
{
	unsigned char *end = dst + len;

	do
	{
		memcpy(dst, src, block);
		dst += block;
		src += block;
	} while (dst < end);
}

static JtDecodeStatus
lz4_fast_sequences(JtDecoder *dec, uint32 target)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	unsigned char *out = (unsigned char *) dec->out;
	uint32		ip = dec->in_pos;
	uint32		op = dec->out_len;

	/*
	 * The bounds, read once: the stores to out may alias *dec as far as the
	 * compiler knows, and would have it read them again for each sequence.
	 */
	const int64 in_avail = dec->in_avail;
	const int64 in_total = dec->in_total;
	const int64 in_limit = Min(in_avail, in_total) - FAST_IN_MARGIN;
	const int64 out_limit = (int64) Min(target, dec->out_cap) - FAST_OUT_MARGIN;
	const int64 target_limit = (int64) target - FAST_OUT_MARGIN;
	const int64 match_end_limit = (int64) dec->out_cap - LZ4_LAST_LITERALS;

	while (in_avail - ip >= FAST_IN_MARGIN && (int64) op <= target_limit)
	{
		unsigned char token = in[ip];
		uint64		litlen = token >> 4;
		uint64		matchlen = token & LZ4_RUN_MASK;
		uint32		p = ip + 1;
		uint32		offset;
		unsigned char b;

		if (litlen == LZ4_RUN_MASK)
		{
			/* the limits lz4_read_length() applies, inline */
			if ((int64) p >= in_total - LZ4_RUN_MASK)
				break;
			do
			{
				if (p >= in_avail)
					goto leave;
				b = in[p++];
				litlen += b;
			} while (b == 255 && litlen <= PG_UINT32_MAX);
			if ((int64) p > in_total - LZ4_RUN_MASK || litlen > PG_UINT32_MAX)
				break;
		}
		/* not the last sequence: far from both ends (see begin_sequence) */
		if ((int64) (op + litlen) > out_limit ||
			(int64) (p + litlen) > in_limit)
			break;
		if (litlen <= 16)
			memcpy(out + op, in + p, 16);
		else
			copy_blocks(out + op, in + p, litlen, 16);
		op += litlen;
		ip = p + litlen;
		offset = in[ip] | (in[ip + 1] << 8);

		p = ip + 2;
		if (matchlen == LZ4_RUN_MASK)
		{
			/* the limits lz4_read_length() applies, inline */
			do
			{
				if (p >= in_avail ||
					(int64) p + 1 > in_total - LZ4_LAST_LITERALS + 1)
				{
					/* let the general code read (or reject) these bytes */
					dec->in_pos = ip;
					dec->out_len = op;
					dec->lz4_token = token;
					dec->lz4_in_match_part = true;
					return JT_DECODE_TARGET_REACHED;
				}
				b = in[p++];
				matchlen += b;
			} while (b == 255);
		}
		matchlen += LZ4_MIN_MATCH;
		if (offset == 0 || offset > op)
			return lz4_corrupt(dec, "match distance reaches before the start of the output");
		ip = p;
		if ((int64) (op + matchlen) > target_limit)
		{
			/*
			 * Near the target: the general code copies the match, in pieces
			 * that never pass the target, so check here the end that
			 * lz4_begin_match() checks (the whole match, not only what this
			 * call will copy).  Below the target the margin implies it.
			 */
			if ((int64) (op + matchlen) > match_end_limit)
				return lz4_corrupt(dec, "match runs into the last bytes of the output");
			dec->in_pos = ip;
			dec->out_len = op;
			dec->match_offset = offset;
			dec->match_left = matchlen;
			return JT_DECODE_TARGET_REACHED;
		}
		if (offset >= 16)
			copy_blocks(out + op, out + op - offset, matchlen, 16);
		else if (offset >= 8)
			copy_blocks(out + op, out + op - offset, matchlen, 8);
		else
			jt_copy_match((char *) out + op, offset, matchlen);
		op += matchlen;
	}
leave:
	dec->in_pos = ip;
	dec->out_len = op;
	return JT_DECODE_TARGET_REACHED;
}

JtDecodeStatus
jt_decode_lz4(JtDecoder *dec, uint32 target)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	unsigned char *out = (unsigned char *) dec->out;
	JtDecodeStatus st;

	/* the reference's special cases, checked before the first token */
	if (dec->in_pos == 0 && dec->out_len == 0 && !dec->lz4_in_match_part)
	{
		if (dec->in_total == 0)
			return lz4_corrupt(dec, "empty compressed data");
		if (dec->out_cap == 0)
		{
			if (dec->in_avail == 0)
				return JT_DECODE_NEED_INPUT;
			if (dec->in_total != 1 || in[0] != 0)
				return lz4_corrupt(dec, "compressed data for an empty value is not the empty block");
			dec->in_pos = 1;
			dec->lz4_last = true;
			return JT_DECODE_FINISHED;
		}
	}

	for (;;)
	{
		if (dec->literal_left > 0)
		{
			uint32		n = Min(dec->literal_left, dec->in_avail - dec->in_pos);

			if (dec->out_len >= target)
				return JT_DECODE_TARGET_REACHED;
			n = Min(n, target - dec->out_len);
			if (n == 0)
				return JT_DECODE_NEED_INPUT;
			memcpy(out + dec->out_len, in + dec->in_pos, n);
			dec->in_pos += n;
			dec->out_len += n;
			dec->literal_left -= n;
			continue;
		}
		if (dec->lz4_last)
			return JT_DECODE_FINISHED;

		if (dec->match_left > 0)
		{
			uint32		n;

			if (dec->out_len >= target)
				return JT_DECODE_TARGET_REACHED;
			n = Min(dec->match_left, target - dec->out_len);
			jt_copy_match((char *) out + dec->out_len, dec->match_offset, n);
			dec->out_len += n;
			dec->match_left -= n;
			continue;
		}

		if (dec->lz4_in_match_part)
			st = lz4_begin_match(dec);
		else
		{
			if (dec->out_len >= target)
				return JT_DECODE_TARGET_REACHED;
			st = lz4_fast_sequences(dec, target);
			if (st != JT_DECODE_TARGET_REACHED)
				return st;
			if (dec->lz4_in_match_part || dec->match_left > 0)
				continue;
			if (dec->out_len >= target)
				return JT_DECODE_TARGET_REACHED;
			st = lz4_begin_sequence(dec);
		}
		if (st != JT_DECODE_TARGET_REACHED)
			return st;
	}
}
