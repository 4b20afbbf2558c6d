/*-------------------------------------------------------------------------
 *
 * narrow.c
 *	  A document narrowed to chains of steps: what a jsonpath expression or
 *	  a containment pattern can see of it, and nothing more.
 *
 * Each chain is a list of steps (keys into objects, indexes into arrays)
 * from the root.  The narrowed document holds the node each chain reaches,
 * complete, inside containers that hold only the next steps of the
 * chains; a node reached takes the place of anything other chains need
 * below it.  A chain stops early where a step names a key its object
 * lacks (the object keeps only what other chains need, and *missed is
 * set), an index past its array's end (the array keeps its size, in nulls
 * but for what other chains need), or a step of the wrong kind (the node
 * there is reached, complete).  Only the bytes of the chains and of the
 * nodes they reach are read: from a skeleton, only the parts that hold
 * them.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/narrow.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/memutils.h"
#include "utils/jsonb.h"

#include "format/part.h"
#include "format/pointer.h"
#include "jsonb/jsonb_writer.h"
#include "jsonb/navigator.h"
#include "read/accessors.h"
#include "read/narrow.h"

void
jt_chains_init(JtChains *chains)
{
	chains->nsteps = 0;
	chains->nchains = 0;
	chains->exact = false;
}

/* Start a chain; false if there is no room for another. */
bool
jt_chains_begin(JtChains *chains)
{
	if (chains->nchains == JT_NARROW_MAX_CHAINS)
		return false;
	chains->start[chains->nchains] = chains->nsteps;
	return true;
}

/* Add a step to the chain begun; false if there is no room for it. */
bool
jt_chains_add(JtChains *chains, const JtPathStep *step)
{
	if (chains->nsteps == JT_NARROW_MAX_STEPS)
		return false;
	chains->steps[chains->nsteps++] = *step;
	return true;
}

/* End the chain begun; returns its length. */
int
jt_chains_end(JtChains *chains)
{
	int			n = chains->nchains++;

	chains->length[n] = chains->nsteps - chains->start[n];
	return chains->length[n];
}

/*
 * The chains of the paths and patterns read last, kept for the backend's
 * life, a few of them, replaced in turn: a query usually passes one path or
 * pattern for every row, and reading it costs about as much again as a
 * short read of a skeleton.  A slot is found by its builder and the bytes
 * it was built from, and its chains point into its copy of them.  It is
 * valid once built (an error leaves it invalid, its copy freed when the
 * slot is used next).
 */
#define KEPT_CHAINS		8

typedef struct KeptChains
{
	JtChainsBuilder build;
	char	   *bytes;			/* a copy, or NULL */
	Size		size;
	bool		valid;
	bool		whole;			/* the builder wants the whole document */
	JtChains	chains;
} KeptChains;

static KeptChains *kept = NULL;
static int	next_kept = 0;

/*
 * The chains build() fills from bytes (size of them), kept; NULL if the
 * whole document is needed.  Those of more than KEPT_MAX_BYTES are built
 * for the caller alone, pointing into bytes.
 */
#define KEPT_MAX_BYTES	8192

const JtChains *
jt_kept_chains(const void *bytes, Size size, JtChainsBuilder build)
{
	KeptChains *slot;

	if (size > KEPT_MAX_BYTES)
	{
		JtChains   *chains = palloc(sizeof(JtChains));

		jt_chains_init(chains);
		return build(bytes, chains) ? chains : NULL;
	}
	if (kept == NULL)
		kept = MemoryContextAllocZero(TopMemoryContext,
									  KEPT_CHAINS * sizeof(KeptChains));
	for (int i = 0; i < KEPT_CHAINS; i++)
	{
		slot = &kept[i];
		if (slot->valid && slot->build == build && slot->size == size &&
			memcmp(slot->bytes, bytes, size) == 0)
			return slot->whole ? NULL : &slot->chains;
	}
	slot = &kept[next_kept];
	next_kept = (next_kept + 1) % KEPT_CHAINS;
	slot->valid = false;
	if (slot->bytes != NULL)
		pfree(slot->bytes);
	slot->bytes = MemoryContextAlloc(TopMemoryContext, size);
	memcpy(slot->bytes, bytes, size);
	slot->size = size;
	slot->build = build;
	jt_chains_init(&slot->chains);
	slot->whole = !build(slot->bytes, &slot->chains);
	slot->valid = true;
	return slot->whole ? NULL : &slot->chains;
}

/*
 * The narrowed document is built as a tree of the chains' steps: each node
 * is a container on some chain, or a node a chain reaches (complete), which
 * takes the place of anything below it.
 */
typedef struct ChainNode
{
	JtPathStep	step;			/* that leads here from the parent */
	Jsonb	   *complete;		/* a node reached, or NULL */
	bool		is_array;		/* a container on a chain: which kind */
	uint32		count;			/* an array: its size, if a step missed */
	List	   *children;
} ChainNode;

static ChainNode *
child_for(ChainNode *parent, const JtPathStep *step)
{
	ListCell   *lc;
	ChainNode  *child;

	foreach(lc, parent->children)
	{
		child = lfirst(lc);
		if (step->key != NULL ?
			child->step.key != NULL &&
			jt_key_cmp(child->step.key, child->step.keylen,
					   step->key, step->keylen) == 0 :
			child->step.key == NULL && child->step.index == step->index)
			return child;
	}
	child = palloc0(sizeof(ChainNode));
	child->step = *step;
	parent->children = lappend(parent->children, child);
	return child;
}

/* The child, a jsonb datum, as an entry of a container being written. */
static void
write_jsonb_entry(JtWriter *w, Jsonb *child)
{
	JtSource	src;
	JtNode		root;
	JtNode		node;

	jt_memory_source(&src, (const char *) &child->root,
					 VARSIZE(child) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	if (jt_node_is_scalar_root(&root))
		jt_nav_entry(&src, &root, 0, &node);
	else
		node = root;
	jt_writer_entry(w, jt_node_entry_type(&node),
					jt_source_read(&src, node.offset, node.length),
					node.length);
}

/* jsonb's order of keys: shorter first, then bytewise */
static int
step_key_cmp(const ListCell *a, const ListCell *b)
{
	const ChainNode *x = lfirst(a);
	const ChainNode *y = lfirst(b);

	return jt_key_cmp(x->step.key, x->step.keylen, y->step.key, y->step.keylen);
}

static int
step_index_cmp(const ListCell *a, const ListCell *b)
{
	const ChainNode *x = lfirst(a);
	const ChainNode *y = lfirst(b);

	return x->step.index < y->step.index ? -1 : x->step.index > y->step.index;
}

static void write_container(StringInfo buf, ChainNode *node);

/*
 * A node of the tree as an entry of the container w writes: a node reached
 * as it is, a container on the chains written in place, so that every byte
 * of the narrowed document is copied once.
 */
static void
write_entry(JtWriter *w, ChainNode *node)
{
	if (node->complete)
	{
		write_jsonb_entry(w, node->complete);
		pfree(node->complete);
		node->complete = NULL;
		return;
	}
	jt_writer_entry_begin(w, JT_JENTRY_CONTAINER);
	write_container(w->buf, node);
	jt_writer_entry_end(w);
}

/* A container on the chains, with the entries its children name. */
static void
write_container(StringInfo buf, ChainNode *node)
{
	JtWriter	w;
	ListCell   *lc;

	check_stack_depth();
	if (!node->is_array)
	{
		list_sort(node->children, step_key_cmp);
		jt_writer_begin(&w, buf, JT_CONTAINER_OBJECT |
						list_length(node->children));
		foreach(lc, node->children)
		{
			ChainNode  *child = lfirst(lc);

			jt_writer_entry(&w, JT_JENTRY_STRING, child->step.key,
							child->step.keylen);
		}
		foreach(lc, node->children)
			write_entry(&w, lfirst(lc));
	}
	else
	{
		uint32		size = node->count;
		uint32		i = 0;

		list_sort(node->children, step_index_cmp);
		if (node->children != NIL)
			size = Max(size, ((ChainNode *) llast(node->children))->step.index + 1);
		jt_writer_begin(&w, buf, JT_CONTAINER_ARRAY | size);
		foreach(lc, node->children)
		{
			ChainNode  *child = lfirst(lc);

			for (; i < child->step.index; i++)
				jt_writer_entry(&w, JT_JENTRY_NULL, "", 0);
			write_entry(&w, child);
			i++;
		}
		for (; i < size; i++)
			jt_writer_entry(&w, JT_JENTRY_NULL, "", 0);
	}
	jt_writer_end(&w);
}

/*
 * The narrowed document of a lone chain of keys that all lead somewhere:
 * an object of one key per step, down to the node reached, copied as it
 * is.  Laid out as the writer lays such objects out (jsonb_writer.c), in
 * one pass: each object's header, its two JEntries and its key, the next
 * object, and at last the node; each value's JEntry, which holds the
 * length of everything after it, is filled in at the end.  (Datum) 0,
 * having closed nothing, where a step is an index or the node is not
 * there to be copied.
 */
#define NARROW_ONE_CHAIN_MAX_STEPS	32

static Datum
narrow_one_chain(JtReach *r, const JtPathStep *steps, int n)
{
	uint32		value_entry[NARROW_ONE_CHAIN_MAX_STEPS];
	uint32		value_start[NARROW_ONE_CHAIN_MAX_STEPS];
	uint32		type;
	const char *data;
	uint32		len;
	Size		room = VARHDRSZ;
	Size		pos = VARHDRSZ;
	char	   *buf;

	if (n <= 0 || n > NARROW_ONE_CHAIN_MAX_STEPS)
		return (Datum) 0;
	for (int i = 0; i < n; i++)
	{
		if (steps[i].key == NULL)
			return (Datum) 0;
		/* the object's header, two JEntries, the key, padding */
		room += 3 * sizeof(uint32) + steps[i].keylen + 3;
	}
	if (!jt_reach_bytes(r, &type, &data, &len))
		return (Datum) 0;
	buf = palloc(room + len);
	for (int i = 0; i < n; i++)
	{
		uint32		header = JT_CONTAINER_OBJECT | 1;
		uint32		key_entry = JT_JENTRY_STRING | JT_JENTRY_HAS_OFF |
			steps[i].keylen;

		memcpy(buf + pos, &header, sizeof(uint32));
		memcpy(buf + pos + sizeof(uint32), &key_entry, sizeof(uint32));
		value_entry[i] = pos + 2 * sizeof(uint32);
		pos += 3 * sizeof(uint32);
		memcpy(buf + pos, steps[i].key, steps[i].keylen);
		pos += steps[i].keylen;
		value_start[i] = pos;
		if (i < n - 1 || jt_entry_type_is_aligned(type))
			while (pos % sizeof(uint32) != 0)
				buf[pos++] = '\0';
	}
	memcpy(buf + pos, data, len);
	pos += len;
	if (pos - value_start[0] > JT_JENTRY_OFFLEN_MASK)
		jt_writer_too_long();
	for (int i = 0; i < n; i++)
	{
		uint32		value = (i < n - 1 ? JT_JENTRY_CONTAINER : type) |
			(uint32) (pos - value_start[i]);

		memcpy(buf + value_entry[i], &value, sizeof(uint32));
	}
	SET_VARSIZE(buf, pos);
	jt_reach_close(r);
	return PointerGetDatum(buf);
}

/*
 * doc narrowed to the chains; *missed is set if a chain met a key its
 * object lacks or an index past its array's end.  (Datum) 0 if narrowing
 * would not pay: an array that would have to be kept is too large, or
 * several chains would read a document in standard storage.
 */
Datum
jt_narrow(Datum doc, const JtChains *chains, bool *missed)
{
	ChainNode	root;
	StringInfoData buf;
	Size		reached_size = 0;

	*missed = false;

	/*
	 * Each chain reads the document from its root.  A skeleton's root is in
	 * the row, and each chain fetches the parts of its own values only; a
	 * document in standard storage is decompressed from its start for each
	 * chain, so with several chains reading it once whole costs less.
	 */
	if (chains->nchains > 1 &&
		!jt_is_pointer((struct varlena *) DatumGetPointer(doc)))
		return (Datum) 0;

	memset(&root, 0, sizeof(root));
	for (int c = 0; c < chains->nchains; c++)
	{
		const JtPathStep *steps = &chains->steps[chains->start[c]];
		int			length = chains->length[c];
		JtReach		r;
		int			taken;
		bool		missing;
		uint32		count;
		Datum		reached = (Datum) 0;
		ChainNode  *node = &root;

		jt_reach(doc, steps, length, &r);
		if (chains->nchains == 1 && r.taken == length && !r.missing &&
			(reached = narrow_one_chain(&r, steps, length)) != (Datum) 0)
			return reached;
		taken = r.taken;
		missing = r.missing;
		count = r.count;
		if (missing)
			jt_reach_close(&r);
		else
			reached = jt_reach_result(&r);
		if (taken == 0 && !missing)
			return reached;		/* the root itself: the whole document */
		for (int i = 0; i < taken; i++)
		{
			node->is_array = steps[i].key == NULL;
			node = child_for(node, &steps[i]);
		}
		if (!missing && node->complete == NULL)
		{
			node->complete = (Jsonb *) DatumGetPointer(reached);
			reached_size += VARSIZE(node->complete);
		}
		else if (steps[taken].key == NULL)
		{
			if (count > JT_NARROW_MAX_INDEX)
				return (Datum) 0;
			node->is_array = true;
			node->count = count;
		}
		else
			node->is_array = false;
		*missed |= missing;
	}
	/* allocated once: what the chains reach and room for their containers */
	buf.maxlen = (int) Min(reached_size + 1024, MaxAllocSize - 1);
	buf.data = palloc(buf.maxlen);
	buf.len = VARHDRSZ;
	buf.cursor = 0;
	write_container(&buf, &root);
	SET_VARSIZE(buf.data, buf.len);
	return PointerGetDatum(buf.data);
}

/*
 * The builtin with its argument arg replaced by narrowed, called through
 * the caller's own fcinfo (its flinfo and resultinfo are the builtin's
 * too: a set returning builtin keeps its state there, and reads its
 * arguments on its first call only).  The argument is put back after.
 */
Datum
jt_call_on_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, int arg,
					Datum narrowed)
{
	Datum		doc = fcinfo->args[arg].value;
	Datum		result;

	fcinfo->args[arg].value = narrowed;
	result = builtin(fcinfo);
	fcinfo->args[arg].value = doc;
	return result;
}
