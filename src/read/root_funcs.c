/*-------------------------------------------------------------------------
 *
 * root_funcs.c
 *	  jsonb_typeof() and jsonb_array_length() answered from the root's
 *	  header.
 *
 * Both need only the kind of the document's root and, for an array, its
 * number of elements: the header of the root container, the first bytes
 * of a compressed or TOASTed value and the row part of a skeleton.  A raw
 * scalar (whose type jsonb_typeof() names, and of which
 * jsonb_array_length() raises its error) and plain documents go to the
 * builtin.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/read/root_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/fmgrprotos.h"

#include "read/datum_source.h"
#include "read/root_funcs.h"

/*
 * The root of the document: false if it is a raw scalar, which the
 * builtins handle.
 */
static bool
root_container(Datum doc, JtNode *root)
{
	JtDatumSource src;
	bool		container;

	jt_datum_source_open(&src, doc, jt_scratch());
	jt_datum_source_root(&src, root);
	container = !jt_node_is_scalar_root(root);
	jt_datum_source_close(&src);
	return container;
}

Datum
jt_jsonb_typeof(PG_FUNCTION_ARGS)
{
	JtNode		root;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)) ||
		!root_container(PG_GETARG_DATUM(0), &root))
		return jsonb_typeof(fcinfo);
	PG_RETURN_TEXT_P(cstring_to_text(jt_node_is_object(&root) ?
									 "object" : "array"));
}

Datum
jt_jsonb_array_length(PG_FUNCTION_ARGS)
{
	JtNode		root;

	if (jt_datum_is_plain(PG_GETARG_DATUM(0)) ||
		!root_container(PG_GETARG_DATUM(0), &root) ||
		!jt_node_is_array(&root))
		return jsonb_array_length(fcinfo);
	PG_RETURN_INT32((int32) jt_node_count(&root));
}
