/*-------------------------------------------------------------------------
 *
 * jsonpath_funcs.c
 *	  The jsonb_path_* functions and the @? and @@ operators, run on the
 *	  part of a document their path can reach.
 *
 * Every $ of a path (the root: the start of the path, or inside a
 * filter) is followed by a chain of member accessors (.key) and constant
 * array subscripts ([3]) naming one node before anything else happens.
 * PostgreSQL's own executor evaluates the path as it is, on a document
 * narrowed to those chains: the nodes they reach, complete, inside
 * containers that hold only the next steps of the chains.  Every item of
 * the path after a chain sees exactly what it would see in the whole
 * document, so results, errors, lax unwrapping, strict checks, variables,
 * filters, `last` and error suppression are the builtin's own; only the
 * bytes of the chains and of the nodes they reach are read.  So
 * '$.a.b ? (@ > $.c)' reads a.b and c, and '$.status == "active"' (a
 * predicate, as @@ takes) reads status.
 *
 * Where a chain meets a key its object lacks, the object keeps only what
 * other chains need (the step finds nothing, or raises the same error in
 * strict mode, whatever else it held); where it meets an index past its
 * array's end, the array keeps its size, in nulls but for what other
 * chains need.  A later item cannot see the nulls: the only items that
 * read an array's size (`last`, .size()) read that of the array they are
 * applied to, which is then a node reached, complete.
 *
 * Paths that would see the difference get the whole document: a $ with
 * no chain after it (the whole document is what it reads), .keyvalue()
 * anywhere (its "id" is the position of an object in the document), and
 * item types this file does not know.  So does a plain (in-memory,
 * uncompressed) document, which has nothing to save.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/jsonpath_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/jsonpath.h"

#include "jsonb/jsonb_writer.h"
#include "jsonb/navigator.h"
#include "read/accessors.h"
#include "read/datum_source.h"
#include "read/jsonpath_funcs.h"

/* bounds on what is narrowed: steps in all, chains, array index taken */
#define MAX_STEPS		64
#define MAX_CHAINS		16
#define MAX_INDEX		10000

/* The chains of a path's $ items, as scan_path() finds them. */
typedef struct PathChains
{
	JtPathStep	steps[MAX_STEPS];
	int			nsteps;
	int			start[MAX_CHAINS];	/* of each chain, in steps */
	int			length[MAX_CHAINS];
	int			nchains;
	bool		whole;			/* the path needs the whole document */
} PathChains;

/* A constant subscript that is a whole number from 0 to MAX_INDEX. */
static bool
constant_index(JsonPathItem *subscript, uint32 *index)
{
	char	   *digits;
	int64		value = 0;

	if (subscript->type != jpiNumeric || jspHasNext(subscript))
		return false;
	digits = DatumGetCString(DirectFunctionCall1(numeric_out,
												 NumericGetDatum(jspGetNumeric(subscript))));
	if (*digits == '\0' || strlen(digits) > 5)
		return false;
	for (const char *c = digits; *c; c++)
	{
		if (*c < '0' || *c > '9')
			return false;
		value = value * 10 + (*c - '0');
	}
	if (value > MAX_INDEX)
		return false;
	*index = (uint32) value;
	return true;
}

/* Is item a step of a chain?  If so, it is stored in *step. */
static bool
chain_step(JsonPathItem *item, JtPathStep *step)
{
	if (item->type == jpiKey)
	{
		int32		len;

		step->key = jspGetString(item, &len);
		step->keylen = (uint32) len;
		return true;
	}
	if (item->type == jpiIndexArray && item->content.array.nelems == 1)
	{
		JsonPathItem from;
		JsonPathItem to;

		step->key = NULL;
		return !jspGetArraySubscript(item, &from, &to, 0) &&
			constant_index(&from, &step->index);
	}
	return false;
}

static void scan_path(JsonPathItem *v, PathChains *pc);

/* scan_path() on an argument of an item */
static void
scan_arg(JsonPathItem *item, int32 pos, PathChains *pc)
{
	JsonPathItem a;

	jspInitByBuffer(&a, item->base, pos);
	scan_path(&a, pc);
}

/*
 * Find the chains that follow each $ of the path from item v on (its next
 * items and arguments), or set pc->whole.
 */
static void
scan_path(JsonPathItem *v, PathChains *pc)
{
	JsonPathItem item = *v;
	JsonPathItem next;

	check_stack_depth();
	while (!pc->whole)
	{
		switch (item.type)
		{
			case jpiRoot:
				if (pc->nchains == MAX_CHAINS)
				{
					pc->whole = true;
					return;
				}
				pc->start[pc->nchains] = pc->nsteps;
				while (jspGetNext(&item, &next) && pc->nsteps < MAX_STEPS &&
					   chain_step(&next, &pc->steps[pc->nsteps]))
				{
					pc->nsteps++;
					item = next;
				}
				pc->length[pc->nchains] = pc->nsteps - pc->start[pc->nchains];
				if (pc->length[pc->nchains++] == 0)
					pc->whole = true;
				break;
			case jpiAnd:
			case jpiOr:
			case jpiEqual:
			case jpiNotEqual:
			case jpiLess:
			case jpiGreater:
			case jpiLessOrEqual:
			case jpiGreaterOrEqual:
			case jpiAdd:
			case jpiSub:
			case jpiMul:
			case jpiDiv:
			case jpiMod:
			case jpiStartsWith:
			case jpiDecimal:
				/* .decimal()'s precision and scale may be absent */
				if (item.content.args.left)
					scan_arg(&item, item.content.args.left, pc);
				if (item.content.args.right)
					scan_arg(&item, item.content.args.right, pc);
				break;
			case jpiNot:
			case jpiIsUnknown:
			case jpiPlus:
			case jpiMinus:
			case jpiFilter:
			case jpiExists:
			case jpiDatetime:
			case jpiTime:
			case jpiTimeTz:
			case jpiTimestamp:
			case jpiTimestampTz:
				/* the datetime methods' argument may be absent */
				if (item.content.arg)
					scan_arg(&item, item.content.arg, pc);
				break;
			case jpiLikeRegex:
				scan_arg(&item, item.content.like_regex.expr, pc);
				break;
			case jpiIndexArray:
				for (int i = 0; i < item.content.array.nelems; i++)
				{
					JsonPathItem from;
					JsonPathItem to;

					if (jspGetArraySubscript(&item, &from, &to, i))
						scan_path(&to, pc);
					scan_path(&from, pc);
				}
				break;
			case jpiNull:
			case jpiString:
			case jpiNumeric:
			case jpiBool:
			case jpiAnyArray:
			case jpiAnyKey:
			case jpiAny:
			case jpiKey:
			case jpiCurrent:
			case jpiVariable:
			case jpiLast:
			case jpiType:
			case jpiSize:
			case jpiAbs:
			case jpiFloor:
			case jpiCeiling:
			case jpiDouble:
			case jpiBigint:
			case jpiBoolean:
			case jpiDate:
			case jpiInteger:
			case jpiNumber:
			case jpiStringFunc:
				break;
			default:
				/* .keyvalue(), and any item type added later */
				pc->whole = true;
				return;
		}
		if (!jspGetNext(&item, &next))
			return;
		item = next;
	}
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

/* A node of the tree as a jsonb datum. */
static Jsonb *
build_node(ChainNode *node)
{
	StringInfoData buf;
	JtWriter	w;
	ListCell   *lc;

	if (node->complete)
		return node->complete;
	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	if (!node->is_array)
	{
		list_sort(node->children, step_key_cmp);
		jt_writer_begin(&w, &buf, JT_CONTAINER_OBJECT |
						list_length(node->children));
		foreach(lc, node->children)
		{
			ChainNode  *child = lfirst(lc);

			jt_writer_entry(&w, JT_JENTRY_STRING, child->step.key,
							child->step.keylen);
		}
		foreach(lc, node->children)
			write_jsonb_entry(&w, build_node(lfirst(lc)));
	}
	else
	{
		uint32		size = node->count;
		uint32		i = 0;

		list_sort(node->children, step_index_cmp);
		if (node->children != NIL)
			size = Max(size, ((ChainNode *) llast(node->children))->step.index + 1);
		jt_writer_begin(&w, &buf, JT_CONTAINER_ARRAY | size);
		foreach(lc, node->children)
		{
			ChainNode  *child = lfirst(lc);

			for (; i < child->step.index; i++)
				jt_writer_entry(&w, JT_JENTRY_NULL, "", 0);
			write_jsonb_entry(&w, build_node(child));
			i++;
		}
		for (; i < size; i++)
			jt_writer_entry(&w, JT_JENTRY_NULL, "", 0);
	}
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/*
 * doc narrowed to the chains of the path, or (Datum) 0 if the path needs
 * the whole document.
 */
static Datum
narrow_for_path(Datum doc, JsonPath *jp)
{
	PathChains	pc;
	JsonPathItem v;
	ChainNode	root;

	pc.nsteps = 0;
	pc.nchains = 0;
	pc.whole = false;
	jspInit(&v, jp);
	scan_path(&v, &pc);
	if (pc.whole || pc.nchains == 0)
		return (Datum) 0;

	memset(&root, 0, sizeof(root));
	for (int c = 0; c < pc.nchains; c++)
	{
		const JtPathStep *steps = &pc.steps[pc.start[c]];
		int			taken;
		bool		missing;
		uint32		count = 0;
		Datum		reached;
		ChainNode  *node = &root;

		reached = jt_follow_steps(doc, steps, pc.length[c], &taken, &missing,
								  &count);
		if (taken == 0 && !missing)
			return reached;		/* the root itself: the whole document */
		for (int i = 0; i < taken; i++)
		{
			node->is_array = steps[i].key == NULL;
			node = child_for(node, &steps[i]);
		}
		if (!missing)
			node->complete = (Jsonb *) DatumGetPointer(reached);
		else if (steps[taken].key == NULL)
		{
			if (count > MAX_INDEX)
				return (Datum) 0;
			node->is_array = true;
			node->count = count;
		}
		else
			node->is_array = false;
	}
	return PointerGetDatum(build_node(&root));
}

/*
 * The builtin, on the document narrowed to the path's chain.  A set
 * returning builtin reads its arguments on its first call only.
 */
static Datum
call_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, bool set_returning)
{
	Datum		doc = PG_GETARG_DATUM(0);
	Datum		narrowed;
	Datum		result;

	if (jt_datum_is_plain(doc) ||
		(set_returning && fcinfo->flinfo->fn_extra != NULL))
		return builtin(fcinfo);
	narrowed = narrow_for_path(doc, PG_GETARG_JSONPATH_P(1));
	if (narrowed == (Datum) 0)
		return builtin(fcinfo);
	fcinfo->args[0].value = narrowed;
	result = builtin(fcinfo);
	fcinfo->args[0].value = doc;
	return result;
}

#define JT_PATH_FUNC(builtin, set_returning) \
Datum \
jt_##builtin(PG_FUNCTION_ARGS) \
{ \
	return call_narrowed(fcinfo, builtin, set_returning); \
}

JT_PATH_FUNC(jsonb_path_exists, false)
JT_PATH_FUNC(jsonb_path_exists_tz, false)
JT_PATH_FUNC(jsonb_path_exists_opr, false)
JT_PATH_FUNC(jsonb_path_match, false)
JT_PATH_FUNC(jsonb_path_match_tz, false)
JT_PATH_FUNC(jsonb_path_match_opr, false)
JT_PATH_FUNC(jsonb_path_query, true)
JT_PATH_FUNC(jsonb_path_query_tz, true)
JT_PATH_FUNC(jsonb_path_query_array, false)
JT_PATH_FUNC(jsonb_path_query_array_tz, false)
JT_PATH_FUNC(jsonb_path_query_first, false)
JT_PATH_FUNC(jsonb_path_query_first_tz, false)
