/*-------------------------------------------------------------------------
 *
 * flatten.c
 *	  Flattening a skeleton back into the original jsonb value, byte for
 *	  byte, its parts coming in through a JtPartFetcher.
 *
 * Flattening walks the tree and writes every container back with the
 * layout rules of PostgreSQL's writer (jsonb_writer.h), gluing the parts
 * where references are.  A part read whole is checked against what its
 * reference says of it (part.c) before a byte of it is used.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/flatten.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "format/delta.h"
#include "format/flatten.h"
#include "jsonb/jsonb_writer.h"

/* State of one flattening. */
typedef struct Flattener
{
	JtSkeleton *skel;
	StringInfoData buf;
	const JtPartFetcher *fetcher;
	uint32		partno;			/* parts fetched so far */
} Flattener;

/*
 * The parts of one reference, fetched.  A part is checked when it is
 * decompressed, or at once if it came uncompressed.  The parts of a
 * container written in one go (write_ref_value()) may stay compressed
 * until their turn comes: each is then decompressed straight into the
 * result (write_part_in_place()), or into a buffer that the next reuses,
 * so that a wide container is not held twice in memory, and bytes are
 * copied, if at all, while they are still in the CPU's caches.
 */
typedef struct LoadedRef
{
	JtRef		ref;
	Oid			toastrelid;
	const JtPartFetcher *fetcher;
	JtSource   *srcs;
	JtNode	   *roots;
	struct varlena **raws;
	bool	   *free_raws;
	JtNode		scalar;			/* long scalars: the value */
	/* the arrays above, for a reference of one part */
	JtSource	src1;
	JtNode		root1;
	struct varlena *raw1;
	bool		free_raw1;
} LoadedRef;

static void flatten_container(Flattener *f, JtSource *src, const JtNode *node);

/* The most a flatten allocates up front, on the pointer's word. */
#define JT_FLATTEN_PRESIZE_MAX	(64 * 1024 * 1024)

/* Did the fetcher give a part in its compressed form? */
static inline bool
fetched_compressed(const JtPartFetcher *fetcher, const struct varlena *part)
{
	if (!VARATT_IS_COMPRESSED(part))
		return false;
	if (fetcher->decompress == NULL)
		elog(ERROR, "a part fetcher that decompresses nothing gave a compressed part");
	return true;
}

static inline bool
part_is_compressed(LoadedRef *lr, uint32 r)
{
	/* no datum for a part read where an inline skeleton holds it */
	return lr->raws[r] != NULL && fetched_compressed(lr->fetcher, lr->raws[r]);
}

/* Check part r (decompressed already) and describe its root. */
static void
check_part(LoadedRef *lr, uint32 r)
{
	jt_part_check(&lr->srcs[r], &lr->ref.ranges[r],
				  lr->ref.layouts ? lr->ref.layouts[r] : -1, lr->raws[r],
				  &lr->roots[r]);
}

/*
 * Decompress part r into raw (room for its raw size; NULL for a new
 * buffer), and check it.  The stored form is freed, or kept for the
 * caller when raw was given: the caller's buffer is then the part's until
 * the next decompression into it.
 */
static void
decompress_part(LoadedRef *lr, uint32 r, struct varlena *raw)
{
	struct varlena *stored = lr->raws[r];

	Assert(part_is_compressed(lr, r));
	if (raw == NULL)
	{
		raw = palloc(lr->ref.ranges[r].rawsize);
		lr->fetcher->decompress(stored, &lr->ref.ranges[r], lr->toastrelid,
								raw);
		if (lr->free_raws[r])
			pfree(stored);
		lr->raws[r] = raw;
		lr->free_raws[r] = true;
		check_part(lr, r);
		return;
	}
	lr->fetcher->decompress(stored, &lr->ref.ranges[r], lr->toastrelid, raw);
	lr->raws[r] = raw;
	check_part(lr, r);
	lr->raws[r] = stored;
}

/*
 * Does write_ref_value() use the parts of a reference one after another?
 * Not a long scalar's (its value is read from the part), nor the parts of
 * an object (its keys come from every part before its values).
 */
static inline bool
parts_used_in_order(const JtRef *ref)
{
	if (ref->header & JT_CONTAINER_SCALAR)
		return false;
	return (ref->header & JT_CONTAINER_OBJECT) == 0 || ref->nranges == 1;
}

/*
 * Fetch the parts of a reference of a skeleton holding deltas: what is
 * stored is asked for, and the content of a part kept as a delta is then
 * rebuilt from its base (so it is never left compressed).
 */
static void
fetch_with_deltas(Flattener *f, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	JtPartEntry *stored = palloc(ref->nranges * sizeof(JtPartEntry));

	for (uint32 r = 0; r < ref->nranges; r++)
		stored[r] = jt_stored_range(f->skel, &ref->ranges[r]);
	f->fetcher->fetch(f->fetcher->arg, f->partno, ref->nranges, stored,
					  lr->toastrelid, lr->raws, lr->free_raws);
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		const JtDelta *d = jt_delta_for(f->skel, &ref->ranges[r]);
		struct varlena *base = lr->raws[r];
		struct varlena *content;

		if (d == NULL)
			continue;
		if (fetched_compressed(lr->fetcher, base))
		{
			struct varlena *raw = palloc(stored[r].rawsize);

			lr->fetcher->decompress(base, &stored[r], lr->toastrelid, raw);
			if (lr->free_raws[r])
				pfree(base);
			base = raw;
			lr->free_raws[r] = true;
		}
		content = jt_delta_apply(d, &ref->ranges[r], base, f->skel->version);
		if (lr->free_raws[r])
			pfree(base);
		lr->raws[r] = content;
		lr->free_raws[r] = true;
	}
	pfree(stored);
}

static void
load_ref(Flattener *f, const JtNode *node, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	bool		in_order;

	jt_skeleton_read_ref(f->skel, node, ref);
	lr->toastrelid = f->skel->hdr.toastrelid;
	lr->fetcher = f->fetcher;
	if (ref->nranges == 1)
	{
		lr->srcs = &lr->src1;
		lr->roots = &lr->root1;
		lr->raws = &lr->raw1;
		lr->free_raws = &lr->free_raw1;
	}
	else
	{
		lr->srcs = palloc(ref->nranges * sizeof(JtSource));
		lr->roots = palloc(ref->nranges * sizeof(JtNode));
		lr->raws = palloc(ref->nranges * sizeof(struct varlena *));
		lr->free_raws = palloc(ref->nranges * sizeof(bool));
	}
	if ((uint64) f->partno + ref->nranges > f->skel->hdr.nparts)
		jt_nav_corrupt(&f->skel->src, "the tree refers to more parts than its header counts");
	if (f->skel->hdr.inline_parts)
	{
		/* read where the skeleton holds them, and checked at once */
		for (uint32 r = 0; r < ref->nranges; r++)
		{
			const char *data;
			uint32		len;

			data = jt_skeleton_inline_part_bytes(f->skel, &ref->ranges[r],
												 &len);
			lr->raws[r] = NULL;
			lr->free_raws[r] = false;
			jt_part_check_bytes(&lr->srcs[r], &ref->ranges[r],
								lr->ref.layouts ? lr->ref.layouts[r] : -1,
								data, len, &lr->roots[r]);
		}
	}
	else if (f->skel->ndeltas == 0)
		f->fetcher->fetch(f->fetcher->arg, f->partno, ref->nranges,
						  ref->ranges, lr->toastrelid, lr->raws,
						  lr->free_raws);
	else
		fetch_with_deltas(f, lr);
	f->partno += ref->nranges;
	in_order = parts_used_in_order(ref);
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		if (lr->raws[r] == NULL)
			continue;
		if (!part_is_compressed(lr, r))
			check_part(lr, r);
		else if (!in_order)
			decompress_part(lr, r, NULL);
	}
	if (ref->header & JT_CONTAINER_SCALAR)
	{
		jt_nav_entry(&lr->srcs[0], &lr->roots[0], 0, &lr->scalar);
		if (lr->scalar.kind == JT_NODE_CONTAINER)
			jt_nav_corrupt(&lr->srcs[0], "a long scalar's part holds a container");
	}
}

static void
free_ref(LoadedRef *lr)
{
	for (uint32 r = 0; r < lr->ref.nranges; r++)
		if (lr->free_raws[r])
			pfree(lr->raws[r]);
	if (lr->srcs != &lr->src1)
	{
		pfree(lr->free_raws);
		pfree(lr->raws);
		pfree(lr->roots);
		pfree(lr->srcs);
	}
	pfree((void *) lr->ref.ranges);
}

/* The JEntry type of the value a loaded reference stands for. */
static uint32
loaded_ref_type(LoadedRef *lr)
{
	if (lr->ref.header & JT_CONTAINER_SCALAR)
		return jt_node_entry_type(&lr->scalar);
	return JT_JENTRY_CONTAINER;
}

/*
 * Decompress part r of a reference written in order where its bytes belong
 * in the result, rather than into a scratch buffer they would then be
 * copied from.  Its header and JEntries land on bytes written already,
 * which are kept in aside (room for them and for the JEntries) and put
 * back.  Its data starts where the result ends, or, when that is not a
 * 4-byte boundary, at the next one if the part's layout byte says that its
 * data starts with an aligned value: that value's padding then grows
 * (jt_copy_entries_placed()).  False, having done nothing, where neither
 * holds.
 */
static bool
write_part_in_place(Flattener *f, LoadedRef *lr, uint32 r, JtWriter *w,
					char *aside)
{
	StringInfo	buf = &f->buf;
	const JtPartEntry *range = &lr->ref.ranges[r];
	uint32		n = range->header & JT_CONTAINER_COUNT_MASK;
	uint32		head = VARHDRSZ + (n + 1) * sizeof(uint32);
	uint32		shift;
	uint32		datalen;
	int			at;

	if (buf->len % sizeof(uint32) == 0)
		shift = 0;
	else if (lr->ref.layouts != NULL &&
			 (lr->ref.layouts[r] & (JT_LAYOUT_ALIGNED | JT_LAYOUT_LEAD_MASK)) ==
			 JT_LAYOUT_ALIGNED)
		shift = INTALIGN(buf->len) - buf->len;
	else
		return false;
	/* a part too short for its count is reported by the usual path */
	if ((uint32) range->rawsize < head || (uint64) buf->len + shift < head)
		return false;
	datalen = range->rawsize - head;

	enlargeStringInfo(buf, shift + datalen);
	at = buf->len + shift - head;
	memcpy(aside, buf->data + at, head - shift);
	decompress_part(lr, r, (struct varlena *) (buf->data + at));
	memcpy(aside + head, buf->data + at + VARHDRSZ + sizeof(uint32),
		   n * sizeof(uint32));
	memcpy(buf->data + at, aside, head - shift);
	jt_copy_entries_placed(w, &lr->srcs[r], aside + head, n, datalen, shift);
	return true;
}

/* Append the bytes of the value a loaded reference stands for. */
static void
write_ref_value(Flattener *f, LoadedRef *lr)
{
	JtRef	   *ref = &lr->ref;
	bool		object = (ref->header & JT_CONTAINER_OBJECT) != 0;
	JtWriter	w;
	uint64		rawsize = 0;
	uint32		largest = 0;
	uint32		most_entries = 0;
	struct varlena *scratch = NULL;
	char	   *aside = NULL;

	if (ref->header & JT_CONTAINER_SCALAR)
	{
		appendBinaryStringInfo(&f->buf,
							   jt_source_read(&lr->srcs[0], lr->scalar.offset,
											  lr->scalar.length),
							   lr->scalar.length);
		return;
	}
	if (ref->nranges == 1)
	{
		/* one part: the container itself, byte for byte */
		jt_pad_to_int(&f->buf);
		if (part_is_compressed(lr, 0))
		{
			/*
			 * Decompressed where it belongs, its header over the last bytes
			 * written (kept aside), so the buffer grows by its content only:
			 * one presized to the document's size is not enlarged.
			 */
			int			at = f->buf.len - VARHDRSZ;
			char		saved[VARHDRSZ];

			Assert(at >= 0);
			enlargeStringInfo(&f->buf, ref->ranges[0].rawsize - VARHDRSZ);
			memcpy(saved, f->buf.data + at, VARHDRSZ);
			decompress_part(lr, 0, (struct varlena *) (f->buf.data + at));
			memcpy(f->buf.data + at, saved, VARHDRSZ);
			f->buf.len += ref->ranges[0].rawsize - VARHDRSZ;
			f->buf.data[f->buf.len] = '\0';
			return;
		}
		appendBinaryStringInfo(&f->buf, lr->srcs[0].data, lr->srcs[0].size);
		return;
	}

	/*
	 * Room for all of it at once: the layout bytes give its size exactly,
	 * else the parts' sizes bound it.  Not more than exactly, since a
	 * buffer presized for the whole document would then be doubled.
	 */
	for (uint32 r = 0; r < ref->nranges; r++)
	{
		rawsize += ref->ranges[r].rawsize - VARHDRSZ;
		if (part_is_compressed(lr, r))
		{
			largest = Max(largest, (uint32) ref->ranges[r].rawsize);
			most_entries = Max(most_entries, ref->ranges[r].header &
							   JT_CONTAINER_COUNT_MASK);
		}
	}
	(void) jt_ref_flat_size(ref, &rawsize);
	if (rawsize < MaxAllocSize - f->buf.len)
		enlargeStringInfo(&f->buf, (int) rawsize);
	if (largest > 0)
		aside = palloc((2 * (Size) most_entries + 2) * sizeof(uint32) +
					   VARHDRSZ);

	/* several parts: their entries, keys of every part before the values */
	jt_writer_begin(&w, &f->buf, ref->header);
	for (int pass = 0; pass < (object ? 2 : 1); pass++)
	{
		for (uint32 r = 0; r < ref->nranges; r++)
		{
			uint32		n = ref->ranges[r].header & JT_CONTAINER_COUNT_MASK;

			if (part_is_compressed(lr, r))
			{
				/* the parts of an object were decompressed by load_ref() */
				Assert(!object);
				if (write_part_in_place(f, lr, r, &w, aside))
					continue;
				if (scratch == NULL)
					scratch = palloc(largest);
				decompress_part(lr, r, scratch);
			}
			jt_copy_entries(&w, &lr->srcs[r], &lr->roots[r], pass * n, n);
		}
	}
	jt_writer_end(&w);
	if (scratch)
		pfree(scratch);
	if (aside)
		pfree(aside);
}

/*
 * Does a container of the tree hold no reference, at any depth?  Its
 * entries are checked as writing them would check them.  Such a container
 * is its own flat form, byte for byte: the tree keeps containers in jsonb's
 * layout, whose padding is relative to the container's start, 4-byte
 * aligned in both.  Containers nested more than depth deep are not
 * looked into (false), so that a reference deep in a chain of containers
 * does not have the chain walked once for each of its levels.
 */
static bool
container_is_plain(JtSource *src, const JtNode *node, int depth)
{
	JtEntryIter it;
	JtNode		child;

	if (depth <= 0)
		return false;
	jt_nav_iter_begin(src, node, &it);
	while (jt_nav_iter_next_nested(src, &it, &child))
	{
		if (child.kind == JT_NODE_REF ||
			!container_is_plain(src, &child, depth - 1))
			return false;
	}
	return true;
}

/* How deep container_is_plain() looks into a container of the tree. */
#define JT_PLAIN_DEPTH	8

/*
 * Is a container of skel's tree its own flat form, holding no reference
 * (see container_is_plain())?  Then its bytes in the tree are its value.
 */
bool
jt_tree_container_is_plain(JtSkeleton *skel, const JtNode *node)
{
	Assert(node->kind == JT_NODE_CONTAINER);
	return container_is_plain(&skel->src, node, JT_PLAIN_DEPTH);
}

/* Write a container of the tree, its references replaced by their values. */
static void
flatten_container(Flattener *f, JtSource *src, const JtNode *node)
{
	JtWriter	w;
	JtEntryIter it;
	JtNode		child;

	CHECK_FOR_INTERRUPTS();
	check_stack_depth();
	jt_writer_begin(&w, &f->buf, node->header);
	jt_nav_iter_begin(src, node, &it);
	while (jt_nav_iter_next(src, &it, &child))
	{
		if (child.kind == JT_NODE_REF)
		{
			LoadedRef	lr;

			load_ref(f, &child, &lr);
			jt_writer_entry_begin(&w, loaded_ref_type(&lr));
			write_ref_value(f, &lr);
			jt_writer_entry_end(&w);
			free_ref(&lr);
		}
		else if (child.kind == JT_NODE_CONTAINER &&
				 container_is_plain(src, &child, JT_PLAIN_DEPTH))
		{
			jt_writer_entry(&w, JT_JENTRY_CONTAINER,
							jt_source_read(src, child.offset, child.length),
							child.length);
#ifdef USE_ASSERT_CHECKING
			{
				/* what writing it entry by entry gives */
				Flattener	g = *f;
				int			at = f->buf.len - child.length;

				initStringInfo(&g.buf);
				appendStringInfoSpaces(&g.buf, at % 4);
				flatten_container(&g, src, &child);
				Assert(g.buf.len - at % 4 == (int) child.length);
				Assert(memcmp(g.buf.data + at % 4, f->buf.data + at,
							  child.length) == 0);
				Assert(g.partno == f->partno);
				pfree(g.buf.data);
			}
#endif
		}
		else if (child.kind == JT_NODE_CONTAINER)
		{
			jt_writer_entry_begin(&w, JT_JENTRY_CONTAINER);
			flatten_container(f, src, &child);
			jt_writer_entry_end(&w);
		}
		else
			jt_writer_entry(&w, jt_node_entry_type(&child),
							jt_source_read(src, child.offset, child.length),
							child.length);
	}
	jt_writer_end(&w);
}

/*
 * The value a node of a skeleton's tree stands for (the root, or a
 * container or reference inside it), as a palloc'd jsonb datum with a
 * 4-byte header; fetch supplies the raw content of each part.
 */
struct varlena *
jt_skeleton_flatten_node(JtSkeleton *skel, const JtNode *node,
						 const JtPartFetcher *fetcher)
{
	Flattener	f;
	struct varlena *result;
	bool		whole = (node == &skel->root);

	f.skel = skel;
	f.fetcher = fetcher;
	f.partno = 0;

	/*
	 * The whole document's size, when the pointer gives it, is allocated at
	 * once rather than by doubling, which would copy it again at each step.
	 * Bounded, since a corrupt pointer may claim any size (the result's is
	 * checked against it afterwards).
	 */
	if (whole && skel->flat_size > 0)
	{
		f.buf.maxlen = (int) Min(skel->flat_size, JT_FLATTEN_PRESIZE_MAX) + 1;
		f.buf.data = palloc(f.buf.maxlen);
		resetStringInfo(&f.buf);
	}
	else
		initStringInfo(&f.buf);
	appendStringInfoSpaces(&f.buf, VARHDRSZ);

	if (node->kind == JT_NODE_REF)
	{
		LoadedRef	lr;

		load_ref(&f, node, &lr);
		if (lr.ref.header & JT_CONTAINER_SCALAR)
			jt_nav_corrupt(&skel->src, "a long scalar was read as a container");
		write_ref_value(&f, &lr);
		free_ref(&lr);
	}
	else if (node->kind == JT_NODE_CONTAINER)
		flatten_container(&f, &skel->src, node);
	else
		elog(ERROR, "scalar passed as a container");

	/* with the whole tree flattened, every part has been used */
	if (whole && f.partno != skel->hdr.nparts)
		jt_nav_corrupt(&skel->src, "the tree refers to fewer parts than its header counts");
	result = (struct varlena *) f.buf.data;
	SET_VARSIZE(result, f.buf.len);
	return result;
}

/* The document a skeleton stands for. */
struct varlena *
jt_skeleton_flatten(JtSkeleton *skel, const JtPartFetcher *fetcher)
{
	return jt_skeleton_flatten_node(skel, &skel->root, fetcher);
}
