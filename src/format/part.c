/*-------------------------------------------------------------------------
 *
 * part.c
 *	  One part of a skeleton: its content hash, layout byte and checks, byte
 *	  sources over memory, and copying a part's entries into a container
 *	  being written (SSE2 where the entries' offsets allow).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/part.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "common/hashfn.h"
#include "format/part.h"
#include "support/crc32c.h"

static void
skeleton_corrupt(JtSource *src, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupt jsonb_toaster value"),
			 errdetail("%s.", detail)));
}

static void
skeleton_fill(JtSource *src, uint32 upto)
{
	/* everything is in memory: jt_source_read() checked the bounds */
	elog(ERROR, "skeleton source asked for bytes it does not have");
}

/* A byte source over bytes in memory. */
void
jt_memory_source(JtSource *src, const char *data, uint32 len, bool refs_allowed)
{
	src->data = data;
	src->size = len;
	src->avail = len;
	src->fill = skeleton_fill;
	src->corrupt = skeleton_corrupt;
	src->refs_allowed = refs_allowed;
}

/* Is this a valid header for the root of a document or of a part? */
bool
jt_root_header_ok(uint32 header)
{
	uint32		kind = header & (JT_CONTAINER_OBJECT | JT_CONTAINER_ARRAY);

	if (kind != JT_CONTAINER_OBJECT && kind != JT_CONTAINER_ARRAY)
		return false;
	if (header & JT_CONTAINER_SCALAR)
		return kind == JT_CONTAINER_ARRAY &&
			(header & JT_CONTAINER_COUNT_MASK) == 1;
	return true;
}

/*
 * The content hash of a part's raw data (without its varlena header), as
 * format version version takes it.  CRC-32C, which the CPU computes, costs
 * a fraction of hash_bytes(); either is only a hint, confirmed by comparing
 * bytes before a part is shared, and a check of a rebuilt delta.
 */
uint32
jt_part_hash(uint32 version, const char *data, uint32 len)
{
	pg_crc32c	crc;

	if (version < JT_SKELETON_VERSION_CRC32C)
		return hash_bytes((const unsigned char *) data, (int) len);
	INIT_CRC32C(crc);
	crc = jt_comp_crc32c(crc, data, len);
	FIN_CRC32C(crc);
	return (uint32) crc;
}

/*
 * The layout byte of a part whose root (in src) is an object or an array
 * (format.h).  The keys take the bytes up to where the first value
 * starts; the values are walked up to the first aligned one only.
 */
uint8
jt_part_layout(JtSource *src, const JtNode *root)
{
	JtEntryIter it;
	JtNode		entry;
	uint64		key_bytes;
	uint64		lead = 0;

	jt_nav_iter_begin(src, root, &it);
	if (jt_node_is_object(root))
		jt_nav_iter_seek(src, &it, jt_node_count(root));
	key_bytes = it.start;
	while (jt_nav_iter_next(src, &it, &entry))
	{
		if (entry.kind == JT_NODE_NUMERIC || entry.kind == JT_NODE_CONTAINER)
			return jt_layout_byte(key_bytes, true, lead);
		lead += entry.length;
	}
	return jt_layout_byte(key_bytes, false, 0);
}

/*
 * Check the raw content of a part (a jsonb datum with a 4-byte header)
 * against its directory entry and its layout byte (-1 for none), and
 * describe its root.  The content hash is not recomputed: reads check
 * structure (the navigator bounds-checks every access), and hashing every
 * byte fetched would cost a quarter of a wide read; the hash serves
 * sharing (src/toaster/sharing.c), which compares bytes.
 */
void
jt_part_check(JtSource *partsrc, const JtPartEntry *range, int layout,
			  const struct varlena *raw, JtNode *root)
{
	if (VARATT_IS_EXTENDED(raw))
	{
		jt_memory_source(partsrc, NULL, 0, false);
		jt_nav_corrupt(partsrc, "a part's size differs from its reference's");
	}
	jt_part_check_bytes(partsrc, range, layout, VARDATA(raw),
						VARSIZE(raw) - VARHDRSZ, root);
}

/*
 * The same for a part's content (len bytes at data, without a varlena
 * header), read where it lies.
 */
void
jt_part_check_bytes(JtSource *partsrc, const JtPartEntry *range, int layout,
					const char *data, uint32 len, JtNode *root)
{
	jt_memory_source(partsrc, NULL, 0, false);
	if ((uint64) len + VARHDRSZ != (uint64) (uint32) range->rawsize)
		jt_nav_corrupt(partsrc, "a part's size differs from its reference's");
	jt_memory_source(partsrc, data, len, false);
	jt_nav_root(partsrc, root);
	if (root->header != range->header)
		jt_nav_corrupt(partsrc, "a part's root differs from its reference's");
	if (!jt_nav_entries_fill(partsrc, root))
		jt_nav_corrupt(partsrc, "a part's entries do not end where its data ends");
	/* a wrong byte would give a one-part update a wrong size: report it now */
	if (layout >= 0 && (uint8) layout != jt_part_layout(partsrc, root))
		jt_nav_corrupt(partsrc, "a part's layout byte differs from its content's");
}

/*
 * The end offset of entry i of a part's root container, whose previous
 * entry ends at start, checked against the data area; *type gets the
 * entry's type, checked too, unless type is NULL.
 */
static inline uint32
next_entry_end(JtSource *src, const char *jentries, uint32 i, uint32 start,
			   uint32 datalen, uint32 *type)
{
	uint32		e;
	uint32		end;

	memcpy(&e, jentries + (uint64) i * sizeof(uint32), sizeof(uint32));
	end = (e & JT_JENTRY_HAS_OFF) ? (e & JT_JENTRY_OFFLEN_MASK) :
		start + (e & JT_JENTRY_OFFLEN_MASK);
	if (unlikely(end < start || end > datalen))
		jt_nav_corrupt(src, "an entry of a part lies outside its data");
	if (type)
	{
		*type = e & JT_JENTRY_TYPE_MASK;
		if (unlikely(*type > JT_JENTRY_CONTAINER))
			jt_nav_corrupt(src, "an entry of a part has an invalid type");
	}
	return end;
}

/*
 * Copy n JEntries (fewer than a stride) to out and sum their lengths; they
 * must all be plain lengths (no end offset) of valid types, false if one
 * is not.  The inner loop of flattening wide containers, one pass over the
 * entries: the check is a running OR of each entry's top three bits plus
 * one, which stays below 4 exactly while they are 0 (string, numeric), 1
 * (booleans) or 2 (null, container); 3 is an invalid type, 4 to 7 carry
 * an end offset.
 */
static inline bool
copy_plain_lengths(char *out, const char *jentries, uint32 n, uint64 *sum)
{
	uint64		total;
	uint32		bad;
	uint32		k = 0;

	StaticAssertStmt(JT_JENTRY_CONTAINER >> 29 == 2 &&
					 JT_JENTRY_HAS_OFF >> 29 == 4,
					 "JEntry type bits moved");
	Assert(n < JT_JENTRY_OFFSET_STRIDE);
#ifdef __SSE2__
	{
		/*
		 * Four entries at a time.  A lane sums at most 7 lengths below 2^28
		 * (n is under a stride), so it cannot overflow.
		 */
		const __m128i zero = _mm_setzero_si128();
		const __m128i mask = _mm_set1_epi32(JT_JENTRY_OFFLEN_MASK);
		const __m128i one = _mm_set1_epi32(1);
		__m128i		sums = zero;
		__m128i		bits = zero;
		uint32		lanes[4];
		uint32		b[4];

		for (; k + 4 <= n; k += 4)
		{
			__m128i		e = _mm_loadu_si128((const __m128i *) (jentries + k * sizeof(uint32)));
			__m128i		len = _mm_and_si128(e, mask);

			_mm_storeu_si128((__m128i *) (out + k * sizeof(uint32)), e);

			sums = _mm_add_epi32(sums, len);
			bits = _mm_or_si128(bits, _mm_add_epi32(_mm_srli_epi32(e, 29), one));
		}
		_mm_storeu_si128((__m128i *) lanes, sums);
		_mm_storeu_si128((__m128i *) b, bits);
		total = (uint64) lanes[0] + lanes[1] + lanes[2] + lanes[3];
		bad = b[0] | b[1] | b[2] | b[3];
	}
#else
	total = 0;
	bad = 0;
#endif
	for (; k < n; k++)
	{
		uint32		e;

		memcpy(&e, jentries + k * sizeof(uint32), sizeof(uint32));
		memcpy(out + k * sizeof(uint32), &e, sizeof(uint32));
		total += e & JT_JENTRY_OFFLEN_MASK;
		bad |= (e >> 29) + 1;
	}
	*sum = total;
	return bad < 4;
}

/* How many entries from entry i on come before a stride point. */
static inline uint32
entries_to_stride(uint32 i)
{
	return (JT_JENTRY_OFFSET_STRIDE - i % JT_JENTRY_OFFSET_STRIDE) %
		JT_JENTRY_OFFSET_STRIDE;
}

/*
 * Append the JEntries of n entries of a part, from entry i on, whose bytes
 * are copied in step (so their lengths are unchanged); the entry before i
 * ends at start in the part's data.  Returns where the last one ends.
 *
 * A JEntry holds a length, except every JB_OFFSET_STRIDE'th of a
 * container, which holds an end offset.  Between the stride points of the
 * part and those of the output, runs of JEntries are the same in both: they
 * are copied as they are, and summed and checked on the way; only the
 * entries at either kind of stride point are computed one by one.
 */
static uint32
copy_jentries_in_step(JtWriter *w, JtSource *src, const char *jentries,
					  uint32 i, uint32 n, uint32 start, uint32 datalen)
{
	char	   *out = w->buf->data + w->jentries +
		(uint64) w->next * sizeof(uint32);
	uint32		next = w->next;
	uint64		end = start;
	uint64		totallen = w->totallen;

	if (totallen + (datalen - start) > JT_JENTRY_OFFLEN_MASK)
		jt_writer_too_long();
	jentries += (uint64) i * sizeof(uint32);

	for (uint32 k = 0, to_part = entries_to_stride(i),
		 to_out = entries_to_stride(next);; k++)
	{
		uint32		run = Min(Min(to_part, to_out), n - k);
		uint32		e;
		uint32		type;
		uint64		entry_end;
		uint32		entry;

		if (run > 0)
		{
			uint64		sum;

			if (!copy_plain_lengths(out + k * sizeof(uint32),
									jentries + k * sizeof(uint32), run, &sum))
				jt_nav_corrupt(src, "an entry of a part has an invalid type or a misplaced offset");
			/* checked against datalen at the next stride point, or below */
			end += sum;
			totallen += sum;
			k += run;
			to_part -= run;
			to_out -= run;
		}
		if (k == n)
			break;

		/* a stride point of the part, of the output, or of both */
		memcpy(&e, jentries + k * sizeof(uint32), sizeof(uint32));
		type = e & JT_JENTRY_TYPE_MASK;
		if (type > JT_JENTRY_CONTAINER)
			jt_nav_corrupt(src, "an entry of a part has an invalid type");
		entry_end = (e & JT_JENTRY_HAS_OFF) ? (e & JT_JENTRY_OFFLEN_MASK) :
			end + (e & JT_JENTRY_OFFLEN_MASK);
		if (entry_end < end || entry_end > datalen)
			jt_nav_corrupt(src, "an entry of a part lies outside its data");
		totallen += entry_end - end;
		if (to_out == 0)
			entry = type | (uint32) totallen | JT_JENTRY_HAS_OFF;
		else
			entry = type | (uint32) (entry_end - end);
		memcpy(out + k * sizeof(uint32), &entry, sizeof(uint32));
		end = entry_end;
		to_part = to_part == 0 ? JT_JENTRY_OFFSET_STRIDE - 1 : to_part - 1;
		to_out = to_out == 0 ? JT_JENTRY_OFFSET_STRIDE - 1 : to_out - 1;
	}
	if (end > datalen)
		jt_nav_corrupt(src, "an entry of a part lies outside its data");
	w->next = next + n;
	w->totallen = (uint32) totallen;
	return (uint32) end;
}

/*
 * Append count entries of a container (a part's root, or a container of a
 * document being cut) to a writer, from entry first on.  The container may
 * hold no references, and src must hold all of it in memory already (it
 * keeps pointers from one read while it makes others).
 *
 * An entry's bytes do not depend on where it is, except for the padding
 * before a numeric or a container.  While the output and the part are at
 * the same position modulo 4, that padding is the same in both, and the
 * entries' bytes are copied in one run; only the JEntries are written anew
 * (their offsets follow the output's positions).  An aligned entry met out
 * of step is written with its new padding, and brings the two back in
 * step: both then continue from a 4-byte boundary.
 *
 * This is the flattener's inner loop, over every element of a wide
 * container: it reads the JEntries itself, checking each against the
 * data area, rather than through the navigator entry by entry.
 */
void
jt_copy_entries(JtWriter *w, JtSource *src, const JtNode *root, uint32 first,
				uint32 count)
{
	JtEntryIter it;
	const char *jentries;
	const char *data;
	uint32		datalen;
	uint32		end = 0;
	uint32		pending;
	uint32		i;

	Assert(src->avail == src->size);
	jt_nav_iter_begin(src, root, &it);
	if ((uint64) first + count > it.nentries)
		jt_nav_corrupt(src, "a part has fewer entries than its count");
	if (count == 0)
		return;
	if ((uint64) w->next + count > w->nentries)
		elog(ERROR, "too many entries written to a jsonb container");
	jentries = jt_source_read(src, it.entries, (uint64) it.nentries * sizeof(uint32));
	datalen = (uint32) (it.end - it.data);
	data = jt_source_read(src, it.data, datalen);

	/* where entry "first" starts */
	jt_nav_iter_seek(src, &it, first);
	i = first;
	end = (uint32) it.start;
	pending = end;

	/* out of step: entries up to the first aligned one, written anew */
	if ((w->buf->len - (it.data + end)) % sizeof(uint32) != 0)
	{
		for (; i < first + count; i++)
		{
			uint32		start = end;
			uint32		type;
			uint32		pad;

			end = next_entry_end(src, jentries, i, start, datalen, &type);
			if (!jt_entry_type_is_aligned(type))
			{
				jt_writer_entry_copied(w, type, end - start);
				continue;
			}
			pad = INTALIGN(it.data + start) - (it.data + start);
			if (pad > end - start)
				jt_nav_corrupt(src, "an entry of a part is shorter than its padding");
			appendBinaryStringInfo(w->buf, data + pending, start - pending);
			jt_writer_entry(w, type, data + start + pad, end - start - pad);
			pending = end;
			i++;
			break;
		}
	}

	/* in step: the rest of the entries' bytes are copied as they are */
	if (i < first + count)
		end = copy_jentries_in_step(w, src, jentries, i, first + count - i,
									end, datalen);
	appendBinaryStringInfo(w->buf, data + pending, end - pending);
}

/*
 * Record the n entries of a part that the caller has decompressed in
 * place: its data (datalen bytes) lies at the end of w's buffer, shift
 * bytes on, and its JEntries are read from jentries (a copy: where the
 * part's header was, the buffer holds other bytes again).  With shift 0
 * the bytes are in step and stay where they are.  Otherwise the part was
 * put where its first aligned entry, which starts its data modulo 4, falls
 * as the output's next aligned entry must: that entry's padding grows by
 * shift bytes, of zeros, and the entries before it move back by shift.
 */
void
jt_copy_entries_placed(JtWriter *w, JtSource *src, const char *jentries,
					   uint32 n, uint32 datalen, uint32 shift)
{
	StringInfo	buf = w->buf;
	uint32		end = 0;
	uint32		i = 0;

	Assert(shift < sizeof(uint32));
	if ((uint64) w->next + n > w->nentries)
		elog(ERROR, "too many entries written to a jsonb container");
	if (shift > 0)
	{
		for (;; i++)
		{
			uint32		start = end;
			uint32		type;

			if (i == n)
				jt_nav_corrupt(src, "a part's layout byte differs from its content's");
			end = next_entry_end(src, jentries, i, start, datalen, &type);
			if (!jt_entry_type_is_aligned(type))
			{
				jt_writer_entry_copied(w, type, end - start);
				continue;
			}
			if (start % sizeof(uint32) != 0)
				jt_nav_corrupt(src, "a part's layout byte differs from its content's");
			memmove(buf->data + buf->len, buf->data + buf->len + shift, start);
			memset(buf->data + buf->len + start, 0, shift);
			jt_writer_entry_copied(w, type, end - start + shift);
			i++;
			break;
		}
	}
	if (i < n)
		end = copy_jentries_in_step(w, src, jentries, i, n - i, end, datalen);
	buf->len += end + shift;
	buf->data[buf->len] = '\0';
}
