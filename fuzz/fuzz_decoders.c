/*-------------------------------------------------------------------------
 *
 * fuzz_decoders.c
 *	  libFuzzer target for the resumable pglz and lz4 decoders.
 *
 * The first input byte picks the method and the mode; the rest is data.
 *
 *	- roundtrip: the data is compressed with the reference compressor
 *	  (core's pglz_compress, liblz4's LZ4_compress_default) and decoded by
 *	  ours with input and output targets cut into steps chosen by the data;
 *	  the result must be the original, byte for byte.
 *	- raw: the data is a compressed stream (after a 2-byte raw size) and is
 *	  decoded both by the reference decompressor (core's pglz_decompress,
 *	  LZ4_decompress_safe, as core calls them) and by ours, in steps.
 *	  Whenever ours succeeds, the reference must succeed with the same
 *	  bytes; for pglz the two must also fail alike.  (Our lz4 decoder may
 *	  reject streams outside the block format that the reference lets
 *	  through; see decode_lz4.c.)  Every prefix ours produces must match
 *	  the reference's output.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * fuzz/fuzz_decoders.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <lz4.h>

#include "common/pg_lzcompress.h"
#include "decode/decode.h"

#define MAX_RAW 65536
/* how far past a decode's target its output is checked to be untouched */
#define SENTINEL 64

/* Mark the bytes just past target, which a decode up to it must not touch. */
static void
sentinel_set(char *out, uint32 target, uint32 out_cap)
{
	memset(out + target, 0xa5, Min(out_cap - target, SENTINEL));
}

/* Are the bytes sentinel_set() marked still as it left them? */
static bool
sentinel_intact(const char *out, uint32 target, uint32 out_cap)
{
	for (uint32 i = target; i < Min(out_cap, target + SENTINEL); i++)
		if ((uint8_t) out[i] != 0xa5)
			return false;
	return true;
}

static char raw[MAX_RAW];
static char ref_out[MAX_RAW];
static char our_out[MAX_RAW];
static char stream[PGLZ_MAX_OUTPUT(MAX_RAW) + LZ4_COMPRESSBOUND(MAX_RAW)];

/*
 * Decode with ours, feeding input and raising the output target in steps
 * sized by "steps".  After each step the output so far must match
 * "expect" (when given).  Returns the raw length or -1.
 */
static int32
decode_in_steps(JtDecodeMethod method, const char *in, uint32 in_len,
				uint32 out_cap, const uint8_t *steps, size_t nsteps,
				const char *expect, int32 expect_len)
{
	JtDecoder	dec;
	uint32		avail = 0;
	uint32		target = 0;
	size_t		k = 0;

	jt_decoder_init(&dec, method, our_out, out_cap, in, in_len);
	while (nsteps > 0 && (avail < in_len || target < out_cap) && k < 4 * nsteps + 8)
	{
		uint8_t		s = steps[k++ % nsteps];
		JtDecodeStatus st;

		if ((s & 1) && avail < in_len)
		{
			avail = Min(in_len, avail + 1 + (s >> 1) * 5);
			jt_decoder_add_input(&dec, in, avail);
		}
		else
			target = Min(out_cap, target + 1 + (s >> 1) * 11);
		sentinel_set(our_out, target, out_cap);
		st = jt_decode(&dec, target);
		if (st == JT_DECODE_CORRUPT)
			return -1;
		if (dec.out_len > target && dec.out_len > 0)
			abort();			/* produced more than the requested target */
		if (!sentinel_intact(our_out, target, out_cap))
			abort();			/* wrote past the requested target */
		if (expect && expect_len >= 0 &&
			((int32) dec.out_len > expect_len ||
			 memcmp(our_out, expect, dec.out_len) != 0))
			abort();			/* a prefix differs from the reference */
		if (st == JT_DECODE_FINISHED)
			break;
	}
	jt_decoder_add_input(&dec, in, in_len);
	return jt_decode_finish(&dec, NULL);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	JtDecodeMethod method;
	bool		roundtrip;
	const uint8_t *steps;
	size_t		nsteps;

	if (size < 4)
		return 0;
	method = (data[0] & 1) ? JT_DECODE_LZ4 : JT_DECODE_PGLZ;
	roundtrip = (data[0] & 2) != 0;
	nsteps = Min((size_t) (data[1] % 16), size - 2);
	steps = data + 2;
	data += 2 + nsteps;
	size -= 2 + nsteps;

	if (roundtrip)
	{
		uint32		rawlen = Min(size, MAX_RAW);
		int32		clen;
		int32		got;

		/* stretch short inputs into compressible repetitions */
		memcpy(raw, data, rawlen);
		if (rawlen > 0 && rawlen < 64)
		{
			uint32		n = rawlen;

			while (rawlen + n <= 4096)
			{
				memcpy(raw + rawlen, raw, n);
				rawlen += n;
			}
		}
		if (method == JT_DECODE_PGLZ)
			clen = pglz_compress(raw, rawlen, stream, PGLZ_strategy_always);
		else
			clen = LZ4_compress_default(raw, stream, rawlen, sizeof(stream));
		if (clen < 0 || (method == JT_DECODE_LZ4 && clen == 0))
			return 0;
		got = decode_in_steps(method, stream, clen, rawlen, steps, nsteps,
							  raw, rawlen);
		if (got != (int32) rawlen || memcmp(our_out, raw, rawlen) != 0)
			abort();
	}
	else
	{
		uint32		rawsize;
		int32		ref;
		int32		ours;

		if (size < 2)
			return 0;
		rawsize = ((uint32) data[0] | ((uint32) data[1] << 8)) % MAX_RAW;
		data += 2;
		size -= 2;
		if (method == JT_DECODE_PGLZ)
			ref = pglz_decompress((const char *) data, size, ref_out, rawsize, true);
		else
			ref = LZ4_decompress_safe((const char *) data, ref_out, size, rawsize);
		ours = decode_in_steps(method, (const char *) data, size, rawsize,
							   steps, nsteps, ref >= 0 ? ref_out : NULL, ref);
		if (ours >= 0 && (ref != ours || memcmp(our_out, ref_out, ours) != 0))
			abort();
		if (method == JT_DECODE_PGLZ && (ours < 0) != (ref < 0))
			abort();
		if (method == JT_DECODE_PGLZ && rawsize > 0)
		{
			/*
			 * A prefix, as a reader of one part of a compression unit asks
			 * for it: accepted exactly when core's partial decompression
			 * fills it, with the same bytes, and nothing written past it.
			 */
			uint32		upto = rawsize / 2;
			JtDecoder	dec;
			JtDecodeStatus st;
			bool		ours_ok;
			bool		ref_ok;

			ref_ok = pglz_decompress((const char *) data, size, ref_out, upto,
									 false) == (int32) upto;
			jt_decoder_init(&dec, method, our_out, rawsize, (const char *) data,
							size);
			jt_decoder_add_input(&dec, (const char *) data, size);
			sentinel_set(our_out, upto, rawsize);
			st = jt_decode(&dec, upto);
			ours_ok = st != JT_DECODE_CORRUPT && dec.out_len >= upto;
			if (ours_ok != ref_ok ||
				(ref_ok && memcmp(our_out, ref_out, upto) != 0))
				abort();
			if (!sentinel_intact(our_out, upto, rawsize))
				abort();
		}
	}
	return 0;
}
