/*-------------------------------------------------------------------------
 *
 * skeleton_build.c
 *	  Cut a jsonb document into a skeleton and parts (see format.h).
 *
 * Which values leave the skeleton: the longest first.  Every value of the
 * root of at least JT_MIN_PART_SIZE bytes is a candidate; candidates are
 * taken in decreasing size until the skeleton fits the target size.  A
 * value inside one is shorter than it, so it would come after it and then
 * travel with it: only the root's values need be considered.  The
 * short fields therefore stay inline, and a document whose bulk is one
 * long array keeps everything but that array in the heap row.  If cutting
 * every candidate is not enough (an object of many short fields), the
 * whole root leaves and the skeleton is a single reference.
 *
 * The exception is a long value of the root that is mostly one container,
 * as {"data": {"items": [...], "n": 5}}: left whole, that container would
 * lie in one range of it, however long.  Such a value is opened: it stays
 * in the tree, as the root does, and its own values are candidates in its
 * place (should_open()).  A tree holding opened values asks for format
 * version 8 (JtBuildResult.opened).
 *
 * A container that leaves and is larger than the range size is split into
 * ranges of consecutive entries, each stored as a jsonb of its own, so
 * that a reader fetches one range instead of the whole container.  The
 * directory costs jt_entry_size() per range in the skeleton, so a
 * container is cut into JT_MAX_RANGES ranges at most (longer ones get
 * longer ranges), and when the wanted range size would make the skeleton
 * outgrow its target the ranges grow instead.  A container of many
 * megabytes is the exception, where the skeleton's tree may leave the row
 * (large_container_range_size()).  Boundaries depend on the entries'
 * contents (see ends_range()), so that an edit moves only the boundaries
 * near it.
 *
 * Nothing is written here: the result is a tree and a list of parts, in
 * document order, whose stored locations the caller fills in after
 * writing them (jt_build_set_stored()).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/skeleton_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"

#include "format/skeleton.h"
#include "format/skeleton_build.h"
#include "jsonb/jsonb_writer.h"
#include "support/compat.h"

/*
 * The root of the document, or a value of it that may leave the skeleton,
 * or a value opened (should_open()).
 */
typedef struct BuildNode
{
	uint32		index;			/* entry index in its container */
	JtNode		node;			/* where it is in the document */
	bool		external;		/* leaves the skeleton */
	/* the root and opened values: their long values, in document order */
	List	   *children;
	bool		opened;
	/* external containers: entry index where each range starts */
	uint32	   *range_starts;
	uint32		nranges;
} BuildNode;

typedef struct Builder
{
	JtSource	src;			/* the document */
	BuildNode	root;
	List	   *candidates;		/* the values that may leave, longest first */
	bool		some_leave;		/* a candidate leaves the skeleton */
	JtBuildOptions opts;		/* the caller's (open_values may be turned off) */
	int64		open_room;		/* what opened values may leave in the tree */
	JtBuildResult *result;
} Builder;

/* a reference's header, directory and layout bytes, and padding */
#define REF_SIZE(version, nranges) \
	(jt_entry_offset(0, nranges, version) + (nranges) + 3)

/*
 * A value of at least this many range sizes may be opened: left whole, its
 * largest container would make one range of it of at least half that.
 */
#define JT_OPEN_RANGES	512

/* Values are opened this deep at most (the root's values are depth 1). */
#define JT_OPEN_MAX_DEPTH	8

/*
 * Is value n (of a container depth deep) opened?  When it is long
 * (JT_OPEN_RANGES), one container holds at least half of it, and the rest
 * of it would not crowd the tree: what opened values leave in the tree
 * when their long values leave is bounded by their rests, together at most
 * a quarter of the target (open_room, taken in document order).  Should
 * the tree still not fit (short fields of the root), the document is
 * planned again with nothing opened (jt_build_skeleton()).
 */
static bool
should_open(Builder *b, const JtNode *n, int depth)
{
	JtEntryIter it;
	JtNode		entry;

	if (!b->opts.open_values || depth > JT_OPEN_MAX_DEPTH ||
		n->kind != JT_NODE_CONTAINER ||
		n->length / JT_OPEN_RANGES < b->opts.range_size)
		return false;
	jt_nav_iter_begin(&b->src, n, &it);
	jt_nav_iter_seek(&b->src, &it, jt_node_first_value_index(n));
	while (jt_nav_iter_next_long(&b->src, &it, n->length / 2, &entry))
	{
		uint64		rest = n->length - entry.length;

		if (entry.kind != JT_NODE_CONTAINER ||
			(uint64) entry.length * 2 < n->length)
			continue;
		if ((int64) rest > b->open_room)
			return false;
		b->open_room -= (int64) rest;
		return true;
	}
	return false;
}

/*
 * Find the values of container parent (the root, or an opened value, depth
 * deep) long enough to leave: they are its children, and candidates unless
 * opened, when their own values are found in turn.
 */
static void
collect_candidates(Builder *b, BuildNode *parent, int depth)
{
	JtEntryIter it;
	JtNode		entry;

	jt_nav_iter_begin(&b->src, &parent->node, &it);
	/* keys stay in the row */
	jt_nav_iter_seek(&b->src, &it, jt_node_first_value_index(&parent->node));
	while (jt_nav_iter_next_long(&b->src, &it, JT_MIN_PART_SIZE, &entry))
	{
		BuildNode  *child;

		/* the padding counted above may have made up the difference */
		if (entry.length < JT_MIN_PART_SIZE)
			continue;
		child = palloc0(sizeof(BuildNode));
		child->index = it.next - 1;
		child->node = entry;
		parent->children = lappend(parent->children, child);
		if (should_open(b, &entry, depth + 1))
		{
			child->opened = true;
			b->result->opened = true;
			collect_candidates(b, child, depth + 1);
		}
		else
			b->candidates = lappend(b->candidates, child);
	}
}

static int
candidate_cmp(const ListCell *a, const ListCell *b)
{
	const BuildNode *x = lfirst(a);
	const BuildNode *y = lfirst(b);

	if (x->node.length != y->node.length)
		return x->node.length > y->node.length ? -1 : 1;
	/* ties in document order, so that the result is deterministic */
	if (x->node.offset != y->node.offset)
		return x->node.offset < y->node.offset ? -1 : 1;
	return 0;
}

/*
 * Content-defined range boundaries.  A range ends after an entry whose
 * hash falls under a threshold proportional to the entry's size, so ranges
 * hold about range_size bytes whatever the entries' sizes, and whether an
 * entry ends a range depends on that entry alone: an edit, an insertion or
 * a deletion changes the ranges around it, not every range after it (issue
 * 6 shares the unchanged ones between row versions).  An object's entries
 * are hashed by key only, so changing a value never moves a boundary.
 * Ranges are at least a quarter of range_size (no tiny ranges) and at
 * most four times it (a run without a boundary is cut): JT_RANGE_MIN and
 * JT_RANGE_MAX.
 *
 * A threshold that grows with the range's fill would keep range sizes
 * closer to range_size, but then whether an entry ends a range depends on
 * the entries before it, and an edit moves later boundaries until the two
 * versions fall back in step.  tools/range-sim.py compares both: with
 * entries of about 100 bytes in 1 kB ranges, halving the threshold below
 * range_size and doubling it above makes the range holding a random byte
 * only 1.28 instead of 1.31 times range_size, but an entry's deletion
 * changes 1.26 ranges on average instead of 1.03, and up to 5 instead of 2.
 */
static bool
ends_range(const char *bytes, uint32 length, JtNodeKind kind, uint64 size,
		   uint32 range_size)
{
	uint32		h;
	uint64		threshold;

	h = length > 0 ? hash_bytes((const unsigned char *) bytes, (int) length) :
		hash_bytes_uint32((uint32) kind);
	/* P(end) = size / (range_size - minimum), capped at 1 */
	threshold = (size << 32) / (range_size - JT_RANGE_MIN(range_size));
	return (uint64) h < threshold;
}

/* Start a new range at entry i if the one being filled may end before it. */
static void
maybe_cut(BuildNode *n, uint32 i, uint64 *acc, bool natural,
		  uint32 range_size, uint32 maxranges)
{
	if (n->nranges < maxranges && *acc >= JT_RANGE_MIN(range_size) &&
		(natural || *acc >= JT_RANGE_MAX(range_size)))
	{
		n->range_starts[n->nranges++] = i;
		*acc = 0;
	}
}

/*
 * The ranges a container of len bytes is expected to be cut into:
 * content-defined ranges hold range_size bytes on average, and a quarter
 * more is counted for their spread.
 */
static int64
expected_ranges(uint32 len, uint32 range_size)
{
	return (int64) len / range_size * 5 / 4 + 1;
}

/*
 * The range size for container n: the wanted one, doubled while the
 * container would be cut into more than JT_MAX_RANGES ranges.  Every
 * range costs a directory entry in every version of the row (an UPDATE
 * of another column logs it again), while longer ranges cost only the
 * edits and the reads of this container.  It depends on the container's
 * length alone, so that the ranges of a container stay as they are when
 * another one changes.
 */
#define JT_MAX_RANGES	16

/*
 * A container of at least this many range sizes is large: sixteen ranges
 * of it would each be a large document of their own.  Smaller ones keep
 * fewer, longer ranges, which compress better.
 */
#define JT_LARGE_CONTAINER_RANGES	8192

/*
 * The range size for a large container n when the tree may leave the row;
 * 0 for any other container, whose ranges' directory must fit the row.
 * A read of one element fetches the tree and decodes a range: ranges of
 * the power of two below sqrt(length * range_size / 2) bytes (256 kB for
 * 240 MB with the default range size) make the directory and the range
 * grow alike with the length, and cut a large container into at least
 * 2 * JT_ROW_MAX_RANGES ranges on average, whose directory leaves the row
 * with the tree.  It depends on the container's length alone, as
 * container_range_size() does.
 */
static uint32
large_container_range_size(const Builder *b, const BuildNode *n)
{
	uint64		len = n->node.length;
	uint64		size = b->opts.range_size;

	if (!b->opts.large_dirs || len / size < JT_LARGE_CONTAINER_RANGES ||
		jt_node_count(&n->node) <= JT_ROW_MAX_RANGES)
		return 0;
	while (size * 2 <= PG_INT32_MAX / 2 &&
		   (size * 2) * (size * 2) * 2 <= len * b->opts.range_size)
		size *= 2;
	Assert(len / size >= 2 * JT_ROW_MAX_RANGES);
	return (uint32) size;
}

static uint32
container_range_size(const BuildNode *n, uint32 range_size)
{
	while (range_size <= PG_INT32_MAX / 2 &&
		   expected_ranges(n->node.length, range_size) > JT_MAX_RANGES)
		range_size *= 2;
	return range_size;
}

/*
 * Does value n stay one range, with range_size wanted?  A scalar does, and
 * a container no longer than a range or than whole_up_to (the planner's
 * estimate, expected_ref_size(), and the cutting, plan_ranges(), must
 * agree on it).
 */
static bool
stays_one_range(const Builder *b, const BuildNode *n, uint32 range_size)
{
	return n->node.kind != JT_NODE_CONTAINER ||
		n->node.length <= Max(range_size, b->opts.whole_up_to);
}

/* Plan value n as one range. */
static void
one_range(BuildNode *n)
{
	if (n->range_starts != NULL)
		pfree(n->range_starts);
	n->range_starts = NULL;
	n->nranges = 1;
}

/*
 * Cut an external container into ranges of about range_size bytes of
 * entries each (key and value together for objects).
 */
static void
cut_ranges(Builder *b, BuildNode *n, uint32 range_size)
{
	uint32		count;
	JtEntryIter it;
	JtNode		entry;
	uint64		acc = 0;
	uint32		maxranges;

	one_range(n);
	count = jt_node_count(&n->node);
	maxranges = Min(count, n->node.length / Max(JT_RANGE_MIN(range_size), 1) + 1);
	n->range_starts = palloc(maxranges * sizeof(uint32));
	n->range_starts[0] = 0;

	if (jt_node_is_object(&n->node))
	{
		/*
		 * Keys come first; a pair's size is its key's and its value's.  The
		 * pairs are described in one walk (the keys had to be kept anyway).
		 */
		JtNode	   *entries = palloc(2 * (Size) count * sizeof(JtNode));
		bool		end_after_previous = false;

		jt_nav_describe_all(&b->src, &n->node, entries);
		for (uint32 i = 0; i < count; i++)
		{
			const JtNode *key = &entries[i];
			uint64		size;

			maybe_cut(n, i, &acc, end_after_previous, range_size, maxranges);
			size = key->length + entries[count + i].length + 2 * sizeof(uint32);
			acc += size;
			/* it matters only to a range long enough to end (maybe_cut) */
			end_after_previous = acc >= JT_RANGE_MIN(range_size) &&
				ends_range(jt_source_read(&b->src, key->offset, key->length),
						   key->length, key->kind, size, range_size);
		}
		pfree(entries);
	}
	else
	{
		bool		end_after_previous = false;

		jt_nav_iter_begin(&b->src, &n->node, &it);
		for (uint32 i = 0; jt_nav_iter_next(&b->src, &it, &entry); i++)
		{
			uint64		size = entry.length + sizeof(uint32);

			maybe_cut(n, i, &acc, end_after_previous, range_size, maxranges);
			acc += size;
			end_after_previous = acc >= JT_RANGE_MIN(range_size) &&
				ends_range(jt_source_read(&b->src, entry.offset, entry.length),
						   entry.length, entry.kind, size, range_size);
		}
	}
}

/*
 * Plan the ranges of an external value, range_size wanted for those whose
 * directory is to fit the row (plan_ranges_to_fit() doubles it).  A large
 * container is cut with the range size its length gives, halved while its
 * directory would stay in the row (entries longer than their ranges make
 * fewer ranges); one of a few long entries that no halving cuts into more
 * than JT_ROW_MAX_RANGES ranges is planned as any other container, its
 * directory fitted to the row.
 */
static void
plan_ranges(Builder *b, BuildNode *n, uint32 range_size)
{
	uint32		large;

	/* 0 for a container that is not large: no cut here */
	for (large = large_container_range_size(b, n); large >= b->opts.range_size;
		 large /= 2)
	{
		cut_ranges(b, n, large);
		if (n->nranges > JT_ROW_MAX_RANGES)
			return;
	}
	if (stays_one_range(b, n, range_size))
		one_range(n);
	else
		cut_ranges(b, n, container_range_size(n, range_size));
}

/* A jsonb datum (4-byte header) from a buffer that started with one. */
static struct varlena *
finish_datum(StringInfo buf)
{
	struct varlena *v = (struct varlena *) buf->data;

	SET_VARSIZE(v, buf->len);
	return v;
}

static void
start_datum(StringInfo buf)
{
	initStringInfo(buf);
	appendStringInfoSpaces(buf, VARHDRSZ);
}

/* The content of range r of an external value, as a jsonb datum. */
static struct varlena *
build_part(Builder *b, BuildNode *n, uint32 r, uint32 *header)
{
	StringInfoData buf;
	JtWriter	w;

	start_datum(&buf);
	if (n->node.kind != JT_NODE_CONTAINER)
	{
		/* a long scalar, as a raw scalar document */
		*header = JT_CONTAINER_SCALAR | JT_CONTAINER_ARRAY | 1;
		jt_writer_begin(&w, &buf, *header);
		jt_writer_entry(&w, jt_node_entry_type(&n->node),
						jt_source_read(&b->src, n->node.offset, n->node.length),
						n->node.length);
		jt_writer_end(&w);
	}
	else if (n->nranges == 1)
	{
		/* the whole container, as it is */
		*header = n->node.header;
		appendBinaryStringInfo(&buf,
							   jt_source_read(&b->src, n->node.offset, n->node.length),
							   n->node.length);
	}
	else
	{
		uint32		count = jt_node_count(&n->node);
		uint32		first = n->range_starts[r];
		uint32		end = r + 1 < n->nranges ? n->range_starts[r + 1] : count;
		bool		object = jt_node_is_object(&n->node);

		*header = (n->node.header & ~JT_CONTAINER_COUNT_MASK) | (end - first);
		jt_writer_begin(&w, &buf, *header);
		jt_copy_entries(&w, &b->src, &n->node, first, end - first);
		if (object)
			jt_copy_entries(&w, &b->src, &n->node, count + first, end - first);
		jt_writer_end(&w);
	}
	return finish_datum(&buf);
}

static void
add_part(JtBuildResult *res, struct varlena *raw, int range_offset)
{
	if (res->nparts == res->maxparts)
	{
		res->maxparts = Max(8, res->maxparts * 2);
		res->parts = res->parts ?
			repalloc(res->parts, res->maxparts * sizeof(JtBuildPart)) :
			palloc(res->maxparts * sizeof(JtBuildPart));
	}
	res->parts[res->nparts].raw = raw;
	res->parts[res->nparts].range_offset = range_offset;
	res->nparts++;
}

/* Write the reference for an external value, and plan its parts. */
static void
write_ref(Builder *b, StringInfo tree, BuildNode *n)
{
	int			start = tree->len;
	JtRefHeader rh;
	bool		object = n->node.kind == JT_NODE_CONTAINER &&
		jt_node_is_object(&n->node);
	uint8	   *layouts = palloc(n->nranges);

	Assert(start % 4 == 0);
	rh.header = n->node.kind == JT_NODE_CONTAINER ? n->node.header :
		(JT_CONTAINER_SCALAR | JT_CONTAINER_ARRAY | 1);
	rh.nranges = n->nranges | JT_REF_HAS_LAYOUTS;
	appendBinaryStringInfo(tree, (const char *) &rh, sizeof(rh));
	appendStringInfoSpaces(tree, n->nranges *
						   jt_entry_size(b->result->version));

	for (uint32 r = 0; r < n->nranges; r++)
	{
		JtPartEntry range = {0};
		int			at = (int) jt_entry_offset(start, r,
											   b->result->version);
		struct varlena *raw = build_part(b, n, r, &range.header);
		JtSource	partsrc;
		JtNode		partroot;

		range.rawsize = VARSIZE(raw);
		range.hash = jt_part_hash(b->result->version, VARDATA(raw),
								  VARSIZE(raw) - VARHDRSZ);
		jt_memory_source(&partsrc, VARDATA(raw), VARSIZE(raw) - VARHDRSZ,
						 false);
		jt_nav_root(&partsrc, &partroot);
		layouts[r] = jt_part_layout(&partsrc, &partroot);
		if (object && r > 0)
		{
			JtNode		key;

			jt_nav_entry(&b->src, &n->node, n->range_starts[r], &key);
			range.key_offset = tree->len - start;
			range.key_length = key.length;
			appendBinaryStringInfo(tree,
								   jt_source_read(&b->src, key.offset, key.length),
								   key.length);
		}
		jt_entry_write(tree->data + at, b->result->version, &range);
		add_part(b->result, raw, at);
	}
	appendBinaryStringInfo(tree, (const char *) layouts, n->nranges);
	pfree(layouts);
}

/*
 * Write container n (the root, or an opened value) into the tree: verbatim
 * entries, references, and opened values written alike.
 */
static void
write_container(Builder *b, StringInfo tree, BuildNode *n)
{
	JtWriter	w;
	JtEntryIter it;
	JtNode		entry;
	ListCell   *next_child = list_head(n->children);
	uint32		first_value = jt_node_first_value_index(&n->node);

	check_stack_depth();
	jt_writer_begin(&w, tree, n->node.header);
	jt_nav_iter_begin(&b->src, &n->node, &it);
	while (jt_nav_iter_next(&b->src, &it, &entry))
	{
		BuildNode  *child = NULL;

		if (next_child &&
			((BuildNode *) lfirst(next_child))->index == it.next - 1)
		{
			child = lfirst(next_child);
			next_child = lnext(n->children, next_child);
		}

		if (child && child->external)
		{
			jt_writer_entry_begin(&w, JT_JENTRY_REF);
			write_ref(b, tree, child);
			jt_writer_entry_end(&w);
		}
		else if (child && child->opened)
		{
			jt_writer_entry_begin(&w, JT_JENTRY_CONTAINER);
			write_container(b, tree, child);
			jt_writer_entry_end(&w);
			b->result->keeps_fields = true;
		}
		else
		{
			jt_writer_entry(&w, jt_node_entry_type(&entry),
							jt_source_read(&b->src, entry.offset, entry.length),
							entry.length);
			b->result->keeps_fields |= n == &b->root && it.next - 1 >= first_value;
		}
	}
	jt_writer_end(&w);
}

static void
write_tree(Builder *b)
{
	StringInfo	tree = &b->result->tree;
	uint32		root_entry;

	resetStringInfo(tree);
	b->result->nparts = 0;
	b->result->keeps_fields = false;
	appendStringInfoSpaces(tree, sizeof(uint32));
	if (b->root.external)
	{
		write_ref(b, tree, &b->root);
		root_entry = JT_JENTRY_REF;
	}
	else
	{
		write_container(b, tree, &b->root);
		root_entry = JT_JENTRY_CONTAINER;
	}
	root_entry |= tree->len - sizeof(uint32);
	memcpy(tree->data, &root_entry, sizeof(uint32));
}

/*
 * Bytes the directories of the planned ranges add to the tree, over the
 * one-range references the estimate counted: the entries, and the first
 * key of every object range but the first.  None for a directory that
 * takes the tree out of the row (JT_ROW_MAX_RANGES): the target bounds
 * what the row would hold.
 */
static int64
directory_growth(Builder *b, BuildNode *n)
{
	int64		growth;

	if (!n->external || n->nranges <= 1 || n->nranges > JT_ROW_MAX_RANGES)
		return 0;
	growth = (int64) REF_SIZE(b->result->version, n->nranges) -
		(int64) REF_SIZE(b->result->version, 1);
	if (jt_node_is_object(&n->node))
	{
		for (uint32 r = 1; r < n->nranges; r++)
		{
			JtNode		key;

			jt_nav_entry(&b->src, &n->node, n->range_starts[r], &key);
			growth += key.length;
		}
	}
	return growth;
}

static int64
plan_all_ranges(Builder *b, uint32 range_size)
{
	ListCell   *lc;
	int64		growth;

	foreach(lc, b->candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (n->external)
			plan_ranges(b, n, range_size);
	}
	if (b->root.external)
		plan_ranges(b, &b->root, range_size);

	growth = directory_growth(b, &b->root);
	foreach(lc, b->candidates)
		growth += directory_growth(b, lfirst(lc));
	return growth;
}

/* Make a candidate leave the tree; returns what the tree's size changes by. */
static int64
make_external(Builder *b, BuildNode *n)
{
	n->external = true;
	b->some_leave = true;
	return (int64) REF_SIZE(b->result->version, 1) - n->node.length;
}

/* The longest candidate still in the tree with nothing of it gone, or NULL. */
static BuildNode *
next_inline_candidate(Builder *b)
{
	ListCell   *lc;

	foreach(lc, b->candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (!n->external)
			return n;
	}
	return NULL;
}

/*
 * Plan the ranges with the wanted range size.  If their directories do not
 * fit in the target, first make more values leave the tree (that keeps the
 * ranges of the others as they are, so an UPDATE that makes a document
 * grow a little still shares its parts); only when none is left, double
 * the range size until they fit.  Powers of two keep the boundaries where
 * they were when a document grows a little (see ends_range()).
 */
static void
plan_ranges_to_fit(Builder *b, uint32 range_size, int64 est, int32 target)
{
	/* no room for any directory: one range each */
	if (est >= target)
		range_size = PG_INT32_MAX;

	for (;;)
	{
		int64		growth = plan_all_ranges(b, range_size);
		BuildNode  *n;

		if (growth == 0 || est + growth <= target)
			break;
		if (!b->root.external && (n = next_inline_candidate(b)) != NULL)
			est += make_external(b, n);
		else if (range_size <= PG_INT32_MAX / 2)
			range_size *= 2;
		else
			break;
	}
}

/*
 * What a value leaving the tree is expected to take in it: its reference,
 * with a directory entry (and, in an object, a first key) for each range
 * it will be cut into.
 */
#define JT_EXPECTED_KEY_SIZE	16

static int64
expected_ref_size(const Builder *b, const BuildNode *n, uint32 range_size)
{
	int64		nranges;

	if (stays_one_range(b, n, range_size) ||
		large_container_range_size(b, n) > 0)
		return REF_SIZE(b->result->version, 1);
	nranges = expected_ranges(n->node.length,
							  container_range_size(n, range_size));
	return REF_SIZE(b->result->version, nranges) +
		(jt_node_is_object(&n->node) ? nranges * JT_EXPECTED_KEY_SIZE : 0);
}

/*
 * Find the candidates and make the longest leave, until the rest fits the
 * target with room for the directories of the ranges the wide ones will be
 * cut into; returns the tree's estimated size.  Were that room not kept, a
 * document near the target would get larger ranges as soon as it grew a
 * little, and an UPDATE would then share none of its parts with the old
 * version (see plan_ranges_to_fit()).
 */
static int64
plan_leaving(Builder *b)
{
	int64		est;
	int64		with_dirs;
	ListCell   *lc;

	b->open_room = Max(b->opts.target, 0) / 4;
	collect_candidates(b, &b->root, 0);
	list_sort(b->candidates, candidate_cmp);
	est = with_dirs = sizeof(uint32) + b->root.node.length;
	foreach(lc, b->candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (with_dirs <= b->opts.target)
			break;
		with_dirs += expected_ref_size(b, n, b->opts.range_size) - n->node.length;
		est += make_external(b, n);
	}
	return est;
}

/*
 * Plan the skeleton of a document (a flat jsonb datum with a 4-byte
 * header), as opts says (skeleton_build.h).  A container no longer than
 * whole_up_to stays one range: its ranges would be compressed as one unit,
 * which a reader of one of them decodes from its start up to it (half the
 * unit on average, against the whole of it now), and their directory
 * entries would widen every version of the row.  With large_dirs, the tree
 * may leave the row (format.h), and containers of many megabytes are cut
 * into many ranges (large_container_range_size()).  Returns false if the
 * document is not worth a skeleton (a raw scalar, or nothing long enough
 * to leave).
 */
bool
jt_build_skeleton(const struct varlena *doc, const JtBuildOptions *opts,
				  JtBuildResult *result)
{
	Builder		b;
	int64		est;
	ListCell   *lc;

	memset(&b, 0, sizeof(Builder));
	memset(result, 0, sizeof(JtBuildResult));
	initStringInfo(&result->tree);
	result->version = opts->version;
	b.result = result;
	b.opts = *opts;
	jt_memory_source(&b.src, VARDATA(doc), VARSIZE(doc) - VARHDRSZ, false);
	jt_nav_root(&b.src, &b.root.node);
	if (jt_node_is_scalar_root(&b.root.node))
		return false;

	est = plan_leaving(&b);
	if (est > opts->target && result->opened)
	{
		/* what opened values left crowds the tree: open nothing */
		b.candidates = NIL;
		b.root.children = NIL;
		b.some_leave = false;
		b.opts.open_values = false;
		result->opened = false;
		est = plan_leaving(&b);
	}

	if (est > opts->target)
	{
		/* still too big: the whole document leaves */
		foreach(lc, b.candidates)
			((BuildNode *) lfirst(lc))->external = false;
		b.root.external = true;
		est = sizeof(uint32) + REF_SIZE(opts->version, 1);
	}
	else if (!b.some_leave)
		return false;

	plan_ranges_to_fit(&b, opts->range_size, est, opts->target);
	write_tree(&b);
	return true;
}

/*
 * Where part i was stored (stored: an entry giving its extinfo, value,
 * offset and value size): fill in its range in the tree.
 */
void
jt_build_set_stored(JtBuildResult *result, uint32 i,
					const JtPartEntry *stored)
{
	JtPartEntry range;
	char	   *at = result->tree.data + result->parts[i].range_offset;

	jt_entry_read(at, result->version, &range);
	jt_entry_set_location(&range, stored);
	jt_entry_write(at, result->version, &range);
}

/* The directory entry planned for part i. */
void
jt_build_entry(const JtBuildResult *result, uint32 i, JtPartEntry *entry)
{
	jt_entry_read(result->tree.data + result->parts[i].range_offset,
				  result->version, entry);
}

/*
 * The payload of the skeleton planned (header and tree), for parts kept in
 * toastrelid: palloc'd, *len bytes.
 */
char *
jt_build_payload(const JtBuildResult *result, Oid toastrelid, uint32 *len)
{
	JtSkeletonInfo info = {0};
	char	   *payload;

	info.toastrelid = toastrelid;
	info.nparts = result->nparts;
	info.tree_size = result->tree.len;
	*len = JT_PAYLOAD_TREE_OFFSET + result->tree.len;
	payload = palloc(*len);
	jt_payload_write_info(payload, &info);
	memcpy(payload + JT_PAYLOAD_TREE_OFFSET, result->tree.data,
		   result->tree.len);
	return payload;
}
