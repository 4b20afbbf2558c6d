/*-------------------------------------------------------------------------
 *
 * skeleton_build.c
 *	  Cut a jsonb document into a skeleton and parts (see skeleton.h).
 *
 * Which values leave the skeleton: the longest first.  Every value of at
 * least JT_MIN_PART_SIZE bytes is a candidate; candidates are taken in
 * decreasing size (so a container goes before anything inside it, which
 * then travels with it) until the skeleton fits the target size.  The
 * short fields therefore stay inline, and a document whose bulk is one
 * long array keeps everything but that array in the heap row.  If cutting
 * every candidate is not enough (an object of many short fields), the
 * whole root leaves and the skeleton is a single reference.
 *
 * A container that leaves and is larger than the range size is split into
 * ranges of consecutive entries, each stored as a jsonb of its own, so
 * that a reader fetches one range instead of the whole container.  The
 * directory costs sizeof(JtRefRange) per range in the skeleton, so when
 * the wanted range size would make the skeleton outgrow its target the
 * ranges grow instead.
 *
 * Nothing is written here: the result is a tree and a list of parts, in
 * document order, whose stored locations the caller fills in after
 * writing them (jt_build_set_stored()).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/skeleton_build.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"

#include "compat.h"
#include "jsonb_writer.h"
#include "skeleton.h"
#include "skeleton_build.h"

/* A value of the document that may leave the skeleton, or leads to one. */
typedef struct BuildNode
{
	struct BuildNode *parent;
	uint32		index;			/* entry index in the parent container */
	JtNode		node;			/* where it is in the document */
	bool		external;		/* leaves the skeleton */
	bool		external_below;	/* something inside it leaves */
	List	   *children;		/* candidates among its entries, in order */
	/* external containers: entry index where each range starts */
	uint32	   *range_starts;
	uint32		nranges;
} BuildNode;

typedef struct Builder
{
	JtSource	src;			/* the document */
	BuildNode	root;
	List	   *candidates;		/* every BuildNode but the root */
	JtBuildResult *result;
} Builder;

#define REF_SIZE(nranges) \
	(sizeof(JtRefHeader) + (nranges) * sizeof(JtRefRange) + 3)

/* Find the values of a container (and below) long enough to leave. */
static void
collect_candidates(Builder *b, BuildNode *parent)
{
	JtEntryIter it;
	JtNode		entry;
	uint32		first_value = jt_node_is_object(&parent->node) ?
		jt_node_count(&parent->node) : 0;

	check_stack_depth();
	jt_nav_iter_begin(&b->src, &parent->node, &it);
	while (jt_nav_iter_next(&b->src, &it, &entry))
	{
		BuildNode  *child;

		if (it.next - 1 < first_value || entry.length < JT_MIN_PART_SIZE)
			continue;
		child = palloc0(sizeof(BuildNode));
		child->parent = parent;
		child->index = it.next - 1;
		child->node = entry;
		parent->children = lappend(parent->children, child);
		b->candidates = lappend(b->candidates, child);
		if (entry.kind == JT_NODE_CONTAINER)
			collect_candidates(b, child);
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

static bool
ancestor_is_external(const BuildNode *n)
{
	for (n = n->parent; n != NULL; n = n->parent)
		if (n->external)
			return true;
	return false;
}

/*
 * Split an external container into ranges of about range_size bytes of
 * entries each (key and value together for objects).
 */
static void
plan_ranges(Builder *b, BuildNode *n, uint32 range_size)
{
	uint32		count;
	bool		object;
	JtEntryIter it;
	JtNode		entry;
	uint64		acc = 0;
	uint32		maxranges;

	n->nranges = 1;
	if (n->node.kind != JT_NODE_CONTAINER || n->node.length <= range_size)
		return;
	count = jt_node_count(&n->node);
	object = jt_node_is_object(&n->node);
	maxranges = Min(count, n->node.length / Max(range_size, 1) + 1);
	n->range_starts = palloc(maxranges * sizeof(uint32));
	n->range_starts[0] = 0;
	n->nranges = 1;

	/* an object's keys come first: a pair's size is its key's and value's */
	jt_nav_iter_begin(&b->src, &n->node, &it);
	if (object)
	{
		uint32	   *keylen = palloc(count * sizeof(uint32));

		for (uint32 i = 0; i < count; i++)
		{
			if (!jt_nav_iter_next(&b->src, &it, &entry))
				elog(ERROR, "object has fewer keys than its count");
			keylen[i] = entry.length;
		}
		for (uint32 i = 0; i < count; i++)
		{
			if (!jt_nav_iter_next(&b->src, &it, &entry))
				elog(ERROR, "object has fewer values than its count");
			if (acc >= range_size && n->nranges < maxranges)
			{
				n->range_starts[n->nranges++] = i;
				acc = 0;
			}
			acc += keylen[i] + entry.length + 2 * sizeof(uint32);
		}
		pfree(keylen);
	}
	else
	{
		for (uint32 i = 0; jt_nav_iter_next(&b->src, &it, &entry); i++)
		{
			if (acc >= range_size && n->nranges < maxranges)
			{
				n->range_starts[n->nranges++] = i;
				acc = 0;
			}
			acc += entry.length + sizeof(uint32);
		}
	}
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

/* Copy entry i of a container into a writer. */
static void
copy_entry_at(Builder *b, JtWriter *w, const JtNode *container, uint32 i)
{
	JtNode		entry;

	jt_nav_entry(&b->src, container, i, &entry);
	jt_writer_entry(w, jt_node_entry_type(&entry),
					jt_source_read(&b->src, entry.offset, entry.length),
					entry.length);
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
		for (uint32 i = first; i < end; i++)
			copy_entry_at(b, &w, &n->node, i);
		if (object)
			for (uint32 i = first; i < end; i++)
				copy_entry_at(b, &w, &n->node, count + i);
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

	Assert(start % 4 == 0);
	rh.header = n->node.kind == JT_NODE_CONTAINER ? n->node.header :
		(JT_CONTAINER_SCALAR | JT_CONTAINER_ARRAY | 1);
	rh.nranges = n->nranges;
	appendBinaryStringInfo(tree, (const char *) &rh, sizeof(rh));
	appendStringInfoSpaces(tree, n->nranges * sizeof(JtRefRange));

	for (uint32 r = 0; r < n->nranges; r++)
	{
		JtRefRange	range = {0};
		int			at = start + sizeof(JtRefHeader) + r * sizeof(JtRefRange);
		struct varlena *raw = build_part(b, n, r, &range.header);

		range.rawsize = VARSIZE(raw);
		range.hash = hash_bytes((const unsigned char *) VARDATA(raw),
								VARSIZE(raw) - VARHDRSZ);
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
		memcpy(tree->data + at, &range, sizeof(range));
		add_part(b->result, raw, at);
	}
}

/* Write a container of the tree: verbatim entries, references, and below. */
static void
write_container(Builder *b, StringInfo tree, BuildNode *n)
{
	JtWriter	w;
	JtEntryIter it;
	JtNode		entry;
	ListCell   *next_child = list_head(n->children);

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
		else if (child && child->external_below)
		{
			jt_writer_entry_begin(&w, JT_JENTRY_CONTAINER);
			write_container(b, tree, child);
			jt_writer_entry_end(&w);
		}
		else
			jt_writer_entry(&w, jt_node_entry_type(&entry),
							jt_source_read(&b->src, entry.offset, entry.length),
							entry.length);
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
 * Range size for the external containers: the wanted one, or larger so
 * that their directories fit in what the target leaves over.
 */
static uint32
effective_range_size(Builder *b, uint32 range_size, int64 est, int32 target)
{
	uint64		wide_bytes = 0;
	uint32		nwide = 0;
	int64		spare_ranges;
	ListCell   *lc;

	foreach(lc, b->candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (n->external && n->node.kind == JT_NODE_CONTAINER &&
			n->node.length > range_size)
		{
			wide_bytes += n->node.length;
			nwide++;
		}
	}
	if (b->root.external && b->root.node.length > range_size)
	{
		wide_bytes += b->root.node.length;
		nwide++;
	}
	if (nwide == 0)
		return range_size;
	spare_ranges = (target - est) / (int64) sizeof(JtRefRange);
	spare_ranges = Max(spare_ranges, 0) + nwide;
	return (uint32) Max((uint64) range_size, wide_bytes / spare_ranges + 1);
}

static void
plan_all_ranges(Builder *b, uint32 range_size)
{
	ListCell   *lc;

	foreach(lc, b->candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (n->external)
			plan_ranges(b, n, range_size);
	}
	if (b->root.external)
		plan_ranges(b, &b->root, range_size);
}

/*
 * Plan the skeleton of a document (a flat jsonb datum with a 4-byte
 * header): target is the size the tree should not exceed, range_size the
 * wanted size of a range.  Returns false if the document is not worth a
 * skeleton (a raw scalar, or nothing long enough to leave).
 */
bool
jt_build_skeleton(const struct varlena *doc, int32 target, uint32 range_size,
				  JtBuildResult *result)
{
	Builder		b;
	int64		est;
	ListCell   *lc;

	memset(&b, 0, sizeof(Builder));
	memset(result, 0, sizeof(JtBuildResult));
	initStringInfo(&result->tree);
	b.result = result;
	jt_memory_source(&b.src, VARDATA(doc), VARSIZE(doc) - VARHDRSZ, false);
	jt_nav_root(&b.src, &b.root.node);
	if (jt_node_is_scalar_root(&b.root.node))
		return false;

	collect_candidates(&b, &b.root);
	list_sort(b.candidates, candidate_cmp);

	/* the longest values leave first, until the rest fits */
	est = sizeof(uint32) + b.root.node.length;
	foreach(lc, b.candidates)
	{
		BuildNode  *n = lfirst(lc);

		if (est <= target)
			break;
		if (ancestor_is_external(n))
			continue;
		n->external = true;
		est += (int64) REF_SIZE(1) - n->node.length;
		for (BuildNode *a = n->parent; a != NULL && !a->external_below; a = a->parent)
			a->external_below = true;
	}

	if (est > target)
	{
		/* still too big: the whole document leaves */
		foreach(lc, b.candidates)
			((BuildNode *) lfirst(lc))->external = false;
		b.root.external = true;
		est = sizeof(uint32) + REF_SIZE(1);
	}
	else if (!b.root.external_below)
		return false;

	plan_all_ranges(&b, effective_range_size(&b, range_size, est, target));
	write_tree(&b);
	return true;
}

/* Where part i was stored: fill in its range in the tree. */
void
jt_build_set_stored(JtBuildResult *result, uint32 i, uint32 extinfo,
					Oid valueid)
{
	JtRefRange	range;
	char	   *at = result->tree.data + result->parts[i].range_offset;

	memcpy(&range, at, sizeof(range));
	range.extinfo = extinfo;
	range.valueid = valueid;
	memcpy(at, &range, sizeof(range));
}
