/*-------------------------------------------------------------------------
 *
 * decode_pglz.c
 *	  Resumable decoder for PostgreSQL's pglz format.
 *
 * A pglz stream is a sequence of groups: one control byte, then up to
 * eight items, one per control bit from the least significant.  A 0 bit is
 * a literal byte.  A 1 bit is a back-reference tag of 2 or 3 bytes: the low
 * nibble of the first byte is the length minus 3, its high nibble and the
 * second byte the 12-bit distance back into the output (1..4095); a length
 * nibble of 15 means a third byte follows and is added to 18.  Copies may
 * overlap their source, repeating a short pattern.  The stream ends when
 * the output holds the declared raw size; core checks that the input ends
 * there too.
 *
 * The decoder accepts and rejects exactly what core's pglz_decompress()
 * does: a distance of 0 or reaching before the start of the output, and a
 * tag cut off by the end of the input (PostgreSQL 18.4 and later), are
 * corrupt.  A copy longer than the room left in the output is clipped.
 *
 * It stops as soon as the requested output exists, even inside a copy,
 * and never writes past it, so the caller may grow the output buffer as it
 * goes.  When the input runs short in the middle of a tag it leaves the tag
 * unconsumed and asks for more.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode_pglz.c
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "decode/decode_pglz.h"

/*
 * The input ran out at position ip: either for now, or for good (then it
 * is corrupt).
 */
static inline JtDecodeStatus
pglz_out_of_input(JtDecoder *dec, uint32 ip, uint32 needed)
{
	if ((uint64) ip + needed > dec->in_total)
	{
		dec->error = "compressed data ends before the declared raw size";
		return JT_DECODE_CORRUPT;
	}
	return JT_DECODE_NEED_INPUT;
}

/* A control byte and 8 tags of up to 3 bytes; the longest copy. */
#define PGLZ_GROUP_INPUT	(1 + 8 * 3)
#define PGLZ_MAX_MATCH		273

/*
 * The decoder's state lives in locals while it runs and is written back
 * once on return: the stores to out may alias *dec as far as the compiler
 * knows, and would have it reload every field after each output byte.
 */
JtDecodeStatus
jt_decode_pglz(JtDecoder *dec, uint32 target)
{
	const unsigned char *in = (const unsigned char *) dec->in;
	unsigned char *out = (unsigned char *) dec->out;
	const uint32 in_avail = dec->in_avail;
	const uint32 out_cap = dec->out_cap;
	uint32		ip = dec->in_pos;
	uint32		op = dec->out_len;
	uint32		ctrl = dec->ctrl;
	uint32		ctrl_left = dec->ctrl_left;
	JtDecodeStatus status = JT_DECODE_TARGET_REACHED;

	/* the rest of a copy that the previous call stopped at its target */
	if (dec->match_left > 0 && op < target)
	{
		uint32		n = Min(dec->match_left, target - op);

		jt_copy_match((char *) out + op, dec->match_offset, n);
		op += n;
		dec->match_left -= n;
	}

	while (op < target)
	{
		if (ctrl_left == 0)
		{
			/*
			 * At a group boundary.  Whole groups while the input and the
			 * requested output are far enough that no item can reach
			 * either, nor a copy's slack: the only checks left are the
			 * ones on the data.
			 */
			while (in_avail - ip >= PGLZ_GROUP_INPUT &&
				   (int64) target - op >= 8 * PGLZ_MAX_MATCH + JT_WILD_COPY_SLACK)
			{
				ctrl = in[ip++];
				for (int i = 0; i < 8; i++, ctrl >>= 1)
				{
					if (ctrl & 1)
					{
						uint32		len = (in[ip] & 0x0f) + 3;
						uint32		off = ((in[ip] & 0xf0) << 4) | in[ip + 1];

						ip += 2;
						if (len == 18)
							len += in[ip++];
						if (off == 0 || off > op)
						{
							dec->error = "back-reference reaches before the start of the output";
							status = JT_DECODE_CORRUPT;
							goto done;
						}
						jt_copy_match_wild((char *) out + op, off, len);
						op += len;
					}
					else
						out[op++] = in[ip++];
				}
			}
			if (op >= target)
				break;
			if (ip >= in_avail)
			{
				status = pglz_out_of_input(dec, ip, 1);
				break;
			}
			ctrl = in[ip++];
			ctrl_left = 8;
		}
		if (ip >= in_avail)
		{
			status = pglz_out_of_input(dec, ip, 1);
			break;
		}

		if (ctrl & 1)
		{
			uint32		len;
			uint32		off;
			uint32		taglen = 2;
			uint32		n;

			/* an interrupted copy was finished before the loop */
			Assert(dec->match_left == 0);
			if (in_avail - ip < 2)
			{
				status = pglz_out_of_input(dec, ip, 2);
				break;
			}
			len = (in[ip] & 0x0f) + 3;
			off = ((in[ip] & 0xf0) << 4) | in[ip + 1];
			if (len == 18)
			{
				if (in_avail - ip < 3)
				{
					status = pglz_out_of_input(dec, ip, 3);
					break;
				}
				len += in[ip + 2];
				taglen = 3;
			}
			if (off == 0 || off > op)
			{
				dec->error = "back-reference reaches before the start of the output";
				status = JT_DECODE_CORRUPT;
				break;
			}
			ip += taglen;

			/* copy what the target asks for now, the rest on the next call */
			len = Min(len, out_cap - op);
			n = Min(len, target - op);
			if (target - op - n >= JT_WILD_COPY_SLACK)
				jt_copy_match_wild((char *) out + op, off, n);
			else
				jt_copy_match((char *) out + op, off, n);
			op += n;
			if (len > n)
			{
				dec->match_left = len - n;
				dec->match_offset = off;
			}
		}
		else
			out[op++] = in[ip++];

		ctrl >>= 1;
		ctrl_left--;
	}

done:
	dec->in_pos = ip;
	dec->out_len = op;
	dec->ctrl = (uint8) ctrl;
	dec->ctrl_left = (uint8) ctrl_left;
	return status;
}
