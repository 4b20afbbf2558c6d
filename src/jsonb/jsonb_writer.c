/*-------------------------------------------------------------------------
 *
 * jsonb_writer.c
 *	  Write jsonb containers exactly as PostgreSQL's own writer lays them
 *	  out (see jsonb_writer.h).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb/jsonb_writer.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/jsonb.h"

#include "jsonb/jsonb_writer.h"

StaticAssertDecl(JT_JENTRY_OFFSET_STRIDE == JB_OFFSET_STRIDE,
				 "offset stride differs from utils/jsonb.h");

void
jt_pad_to_int(StringInfo buf)
{
	static const char zeroes[4] = {0};
	int			pad = INTALIGN(buf->len) - buf->len;

	if (pad > 0)
		appendBinaryStringInfo(buf, zeroes, pad);
}

void
jt_writer_too_long(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("total size of jsonb container elements exceeds the maximum of %d bytes",
					JT_JENTRY_OFFLEN_MASK)));
}

static void
check_length(uint64 len)
{
	if (len > JT_JENTRY_OFFLEN_MASK)
		jt_writer_too_long();
}

void
jt_writer_begin(JtWriter *w, StringInfo buf, uint32 header)
{
	uint32		count = header & JT_CONTAINER_COUNT_MASK;
	int			pad;
	Size		room;

	w->buf = buf;
	w->nentries = (header & JT_CONTAINER_OBJECT) ? count * 2 : count;
	w->next = 0;
	w->totallen = 0;
	w->entry_type = 0;
	w->entry_start = -1;

	/* padding, header and JEntries (not zeroed: jt_writer_end() checks that
	 * every entry was written), room made once */
	pad = INTALIGN(buf->len) - buf->len;
	room = pad + (Size) (w->nentries + 1) * sizeof(uint32);
	if ((Size) buf->len + room >= (Size) buf->maxlen)
		enlargeStringInfo(buf, room);
	for (int i = 0; i < pad; i++)
		buf->data[buf->len + i] = '\0';
	w->start = buf->len + pad;
	memcpy(buf->data + w->start, &header, sizeof(uint32));
	w->jentries = w->start + sizeof(uint32);
	buf->len += room;
	buf->data[buf->len] = '\0';
}

void
jt_writer_entry_begin(JtWriter *w, uint32 type)
{
	Assert(w->entry_start < 0);
	if (w->next >= w->nentries)
		elog(ERROR, "too many entries written to a jsonb container");
	w->entry_type = type;
	w->entry_start = w->buf->len;
	if (jt_entry_type_is_aligned(type))
		jt_pad_to_int(w->buf);
}

void
jt_writer_entry_end(JtWriter *w)
{
	Assert(w->entry_start >= 0);
	check_length((uint64) w->buf->len - w->entry_start);
	jt_writer_record_entry(w, w->entry_type, w->buf->len - w->entry_start);
	w->entry_start = -1;
}

/*
 * jt_writer_entry_begin(), the bytes, jt_writer_entry_end(), in one go: the
 * inner loop of flattening and narrowing, room made once.
 */
void
jt_writer_entry(JtWriter *w, uint32 type, const char *data, uint32 len)
{
	StringInfo	buf = w->buf;
	int			pad = jt_entry_type_is_aligned(type) ?
		INTALIGN(buf->len) - buf->len : 0;

	Assert(w->entry_start < 0);
	if (w->next >= w->nentries)
		elog(ERROR, "too many entries written to a jsonb container");
	check_length((uint64) pad + len);
	if ((Size) buf->len + pad + len >= (Size) buf->maxlen)
		enlargeStringInfo(buf, pad + len);
	for (int i = 0; i < pad; i++)
		buf->data[buf->len + i] = '\0';
	memcpy(buf->data + buf->len + pad, data, len);
	buf->len += pad + len;
	buf->data[buf->len] = '\0';
	jt_writer_record_entry(w, type, pad + len);
}

void
jt_writer_end(JtWriter *w)
{
	if (w->next != w->nentries)
		elog(ERROR, "jsonb container written with %u of its %u entries",
			 w->next, w->nentries);
	check_length((uint64) w->buf->len - w->start);
}
