/*-------------------------------------------------------------------------
 *
 * containment.c
 *	  jsonb @> jsonb and jsonb <@ jsonb with an object pattern, run on the
 *	  part of the document the pattern names.
 *
 * An object contains an object pattern when it has each of the pattern's
 * keys, with a value that contains the pattern's value (JsonbDeepContains):
 * nothing else of the document matters.  So the builtin runs on the
 * document narrowed (narrow.c) to one chain per key of the pattern, longer
 * where the pattern's value is an object itself: the values it names,
 * complete, in objects holding only those keys.  A key the document lacks
 * answers false at once; that is the common case of a filter such as
 * WHERE jb @> '{"status": "active"}', and of the recheck of every row a
 * GIN index finds.
 *
 * Other patterns (arrays, scalars, an empty object, one with more keys
 * than narrow.c takes chains) and plain documents go to the builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/containment.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "format/part.h"
#include "jsonb/navigator.h"
#include "read/containment.h"
#include "read/datum_source.h"
#include "read/narrow.h"

/*
 * Add a chain for each key of the pattern's object (prefix[0..depth-1]
 * leading to it), or the chains of its value if that is an object with
 * keys.  False if there are more than the chains can take.
 */
static bool
pattern_chains(JtSource *src, const JtNode *object, JtPathStep *prefix,
			   int depth, JtChains *chains)
{
	uint32		n = jt_node_count(object);

	check_stack_depth();
	if (depth >= JT_NARROW_MAX_STEPS)
		return false;
	for (uint32 i = 0; i < n; i++)
	{
		JtNode		key;
		JtNode		value;

		jt_nav_entry(src, object, i, &key);
		jt_nav_entry(src, object, n + i, &value);
		prefix[depth].key = jt_source_read(src, key.offset, key.length);
		prefix[depth].keylen = key.length;
		prefix[depth].index = 0;
		if (value.kind == JT_NODE_CONTAINER && jt_node_is_object(&value) &&
			jt_node_count(&value) > 0)
		{
			if (!pattern_chains(src, &value, prefix, depth + 1, chains))
				return false;
			continue;
		}
		if (!jt_chains_begin(chains))
			return false;
		for (int d = 0; d <= depth; d++)
			if (!jt_chains_add(chains, &prefix[d]))
				return false;
		jt_chains_end(chains);
	}
	return true;
}

/* JtChainsBuilder of a pattern: false unless it is an object, not empty */
static bool
build_pattern_chains(const void *bytes, JtChains *chains)
{
	const Jsonb *pattern = bytes;
	JtSource	src;
	JtNode		root;
	JtPathStep	prefix[JT_NARROW_MAX_STEPS];

	jt_memory_source(&src, (const char *) &pattern->root,
					 VARSIZE(pattern) - VARHDRSZ, false);
	jt_nav_root(&src, &root);
	if (!jt_node_is_object(&root) || jt_node_count(&root) == 0)
		return false;
	return pattern_chains(&src, &root, prefix, 0, chains);
}

/*
 * Does doc contain pattern?  -1 when the builtin must answer it.  The
 * pattern is in memory (detoasted by the caller); doc is read through the
 * navigator.
 */
static int
contains(Datum doc, Jsonb *pattern, Datum *narrowed)
{
	const JtChains *chains;
	bool		missed;

	chains = jt_kept_chains(pattern, VARSIZE(pattern), build_pattern_chains);
	if (chains == NULL)
		return -1;
	*narrowed = jt_narrow(doc, chains, &missed);
	if (*narrowed == (Datum) 0)
		return -1;
	if (missed)
		return 0;				/* a key of the pattern is not there */
	return 1;
}

/*
 * The builtin on the document (argument doc_arg) narrowed for the pattern
 * (the other argument), or false at once if the document lacks a key of
 * it.
 */
static Datum
call_narrowed(FunctionCallInfo fcinfo, PGFunction builtin, int doc_arg)
{
	Datum		doc = PG_GETARG_DATUM(doc_arg);
	Datum		narrowed = (Datum) 0;
	int			answer;

	if (jt_datum_is_plain(doc))
		return builtin(fcinfo);
	answer = contains(doc, PG_GETARG_JSONB_P(1 - doc_arg), &narrowed);
	if (answer == 0)
		PG_RETURN_BOOL(false);
	if (answer < 0)
		return builtin(fcinfo);
	return jt_call_on_narrowed(fcinfo, builtin, doc_arg, narrowed);
}

/* jsonb @> jsonb */
Datum
jt_jsonb_contains(PG_FUNCTION_ARGS)
{
	return call_narrowed(fcinfo, jsonb_contains, 0);
}

/* jsonb <@ jsonb */
Datum
jt_jsonb_contained(PG_FUNCTION_ARGS)
{
	return call_narrowed(fcinfo, jsonb_contained, 1);
}
