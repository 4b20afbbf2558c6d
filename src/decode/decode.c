/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  Entry points shared by the resumable pglz and lz4 decoders.
 *
 * See decode.h for the model.  The per-format state machines live in
 * decode_pglz.c and decode_lz4.c.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/decode/decode.c
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "decode/decode.h"
#include "decode/decode_lz4.h"
#include "decode/decode_pglz.h"

void
jt_decoder_init(JtDecoder *dec, JtDecodeMethod method,
				char *out, uint32 out_cap, const char *in, uint32 in_total)
{
	memset(dec, 0, sizeof(JtDecoder));
	dec->method = method;
	dec->out = out;
	dec->out_cap = out_cap;
	dec->in = in;
	dec->in_total = in_total;
}

/*
 * Tell the decoder that in_avail bytes of input are now present at "in".
 * The buffer may have moved, but must still hold every earlier byte.
 */
void
jt_decoder_add_input(JtDecoder *dec, const char *in, uint32 in_avail)
{
	Assert(in_avail >= dec->in_avail && in_avail <= dec->in_total);
	dec->in = in;
	dec->in_avail = in_avail;
}

/* The output buffer has moved (it was enlarged); its contents are kept. */
void
jt_decoder_move_output(JtDecoder *dec, char *out)
{
	dec->out = out;
}

/*
 * Produce output until at least "target" bytes exist (capped at the output
 * capacity), the input runs out, or the stream proves corrupt.
 */
JtDecodeStatus
jt_decode(JtDecoder *dec, uint32 target)
{
	if (dec->error)
		return JT_DECODE_CORRUPT;
	if (target > dec->out_cap)
		target = dec->out_cap;
	if (dec->method == JT_DECODE_PGLZ)
		return jt_decode_pglz(dec, target);
	return jt_decode_lz4(dec, target);
}

/*
 * Finish decoding a whole value: all input has been given.  Decodes what
 * is left and checks that the stream ends where core's decompression
 * requires.  Returns the raw length, or -1 if the stream is corrupt (then
 * *error, if not NULL, says why).
 */
int32
jt_decode_finish(JtDecoder *dec, const char **error)
{
	JtDecodeStatus status = jt_decode(dec, dec->out_cap);

	Assert(dec->in_avail == dec->in_total);
	if (dec->method == JT_DECODE_PGLZ)
	{
		/*
		 * pglz has no end marker: it stops when the output is full, and, as
		 * with core's check_complete, a complete stream has no input left.
		 */
		if (status == JT_DECODE_TARGET_REACHED && dec->in_pos != dec->in_total)
		{
			dec->error = "compressed data continues past the declared raw size";
			status = JT_DECODE_CORRUPT;
		}
	}
	else if (status == JT_DECODE_TARGET_REACHED)
	{
		/*
		 * lz4 ends with a run of literals, after which the decoder reports
		 * FINISHED; a full output buffer before that means the stream goes on
		 * past the declared size.
		 */
		dec->error = "compressed data continues past the declared raw size";
		status = JT_DECODE_CORRUPT;
	}
	if (status == JT_DECODE_NEED_INPUT)
	{
		/* all input was given, so the stream itself is cut short */
		dec->error = "compressed data ends early";
		status = JT_DECODE_CORRUPT;
	}

	if (status == JT_DECODE_CORRUPT)
	{
		if (error)
			*error = dec->error;
		return -1;
	}
	return (int32) dec->out_len;
}

int32
jt_decode_all(JtDecodeMethod method, const char *in, uint32 in_len,
			  char *out, uint32 out_cap, const char **error)
{
	JtDecoder	dec;

	jt_decoder_init(&dec, method, out, out_cap, in, in_len);
	jt_decoder_add_input(&dec, in, in_len);
	return jt_decode_finish(&dec, error);
}
