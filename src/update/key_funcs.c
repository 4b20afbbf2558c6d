/*-------------------------------------------------------------------------
 *
 * key_funcs.c
 *	  jsonb || object and jsonb - text[] on a stored document, one range of
 *	  keys at a time (patched servers only).
 *
 * An object whose keys fall in several ranges of a split root object is
 * concatenated, and keys of several ranges are removed, one range at a
 * time, each change made on the result of the one before, as
 * jsonb_set(jsonb_set(...)) is (see path_funcs.c).
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/update/key_funcs.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"

#include "jsonb/jsonb_writer.h"
#include "update/key_funcs.h"
#include "update/part_change.h"
#include "update/stored_value.h"
#include "update/tree_change.h"

/*
 * Pairs [first, first + n) of object (a node of src), as a jsonb object of
 * their own.
 */
static Jsonb *
object_slice(JtSource *src, const JtNode *object, uint32 first, uint32 n)
{
	uint32		count = jt_node_count(object);
	JtWriter	w;
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoSpaces(&buf, VARHDRSZ);
	jt_writer_begin(&w, &buf, (object->header & ~JT_CONTAINER_COUNT_MASK) | n);
	jt_copy_entries(&w, src, object, first, n);
	jt_copy_entries(&w, src, object, count + first, n);
	jt_writer_end(&w);
	SET_VARSIZE(buf.data, buf.len);
	return (Jsonb *) buf.data;
}

/*
 * Keys of a root object to set (to values, nodes of vsrc) or to remove
 * (values NULL): the right operand of ||, or the array of jsonb - text[].
 * Sorted as jsonb sorts keys, and distinct.
 */
typedef struct KeyedChange
{
	uint32		count;
	const char **keys;
	uint32	   *keylens;
	JtSource   *vsrc;
	JtNode	   *values;
	JtNode		object;			/* for ||: the right operand, in vsrc */
} KeyedChange;

/* The builtin's doc with keys [first, first + n) of kc set or removed. */
static struct varlena *
builtin_change(const KeyedChange *kc, struct varlena *doc, uint32 first,
			   uint32 n)
{
	Datum	   *names;

	if (kc->values)
		return (struct varlena *) DatumGetPointer(
												  DirectFunctionCall2(jsonb_concat, PointerGetDatum(doc),
																	  PointerGetDatum(object_slice(kc->vsrc, &kc->object,
																								   first, n))));
	names = palloc(n * sizeof(Datum));
	for (uint32 i = 0; i < n; i++)
		names[i] = PointerGetDatum(cstring_to_text_with_len(kc->keys[first + i],
															kc->keylens[first + i]));
	return (struct varlena *) DatumGetPointer(
											  DirectFunctionCall2(jsonb_delete_array, PointerGetDatum(doc),
																  PointerGetDatum(construct_array_builtin(names, n,
																										  TEXTOID))));
}

/*
 * The keys of kc set or removed in pointer, as jsonb_set() or jsonb - text
 * on the stored value would do it: in a split root, one change for the
 * keys that fall in one range (the builtin run on that part, or the splice
 * for a lone key), each change made on the pointer the one before
 * returned; in a root kept in the tree, all keys at once.  The keys are
 * distinct, so the changes commute, and together they do what the builtin
 * does.  skel, ref and shape describe pointer.  NULL when the first change
 * cannot be made so; a later change that cannot is left to the builtin, on
 * the document the changes before it made.
 */
static struct varlena *
change_keys(struct varlena *pointer, StoredShape shape, JtSkeleton *skel,
			JtRef *ref, const KeyedChange *kc)
{
	uint32		i = 0;

	if (shape == SHAPE_TREE_ROOT)
		return jt_apply_tree_patch(pointer, skel, NULL, kc->count, kc->keys,
								   kc->keylens, kc->vsrc, kc->values, true);
	for (;;)
	{
		uint32		end = i + 1;
		uint32		r = jt_ref_range_for_key(ref, kc->keys[i], kc->keylens[i]);
		struct varlena *result;

		while (end < kc->count &&
			   jt_ref_range_for_key(ref, kc->keys[end], kc->keylens[end]) == r)
			end++;
		if (end - i == 1)
			result = jt_change_key(pointer, shape, skel, ref, kc->keys[i],
								   kc->keylens[i], kc->vsrc,
								   kc->values ? &kc->values[i] : NULL, true);
		else
		{
			JtFetchedPart old;
			JtRefSite	site = jt_root_site(skel);

			jt_fetch_part(skel, ref, r, true, &old);
			result = jt_apply_patch(pointer, skel, ref, &site, r, &old,
									builtin_change(kc, old.content, i,
												   end - i),
									NULL);
		}
		if (result == NULL && i == 0)
			return NULL;
		if (result != NULL)
		{
			if (end == kc->count)
				return result;
			pointer = result;
			i = end;
			shape = jt_open_stored(&pointer, skel, ref);
			if (shape != SHAPE_OTHER)
				continue;
		}

		/* the builtin goes on from the last document made, with the rest */
		return builtin_change(kc, pointer, i, kc->count - i);
	}
}

/* jsonb || jsonb, when the right operand is an object */
Datum
jt_jsonb_concat(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	Jsonb	   *right;
	JtSource	src;
	KeyedChange kc;
	struct varlena *pointer = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *result;

	shape = jt_open_stored(&pointer, &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_concat(fcinfo);
	right = PG_GETARG_JSONB_P(1);
	if (!JB_ROOT_IS_OBJECT(right) || JB_ROOT_COUNT(right) == 0)
		return jsonb_concat(fcinfo);

	/* an object's keys are sorted and distinct already */
	jt_memory_source(&src, (const char *) &right->root,
					 VARSIZE(right) - VARHDRSZ, false);
	jt_nav_root(&src, &kc.object);
	kc.count = jt_node_count(&kc.object);
	kc.keys = palloc(kc.count * sizeof(char *));
	kc.keylens = palloc(kc.count * sizeof(uint32));
	kc.values = palloc(kc.count * sizeof(JtNode));
	kc.vsrc = &src;
	for (uint32 i = 0; i < kc.count; i++)
	{
		JtNode		key;

		jt_nav_entry(&src, &kc.object, i, &key);
		kc.keys[i] = jt_source_read(&src, key.offset, key.length);
		kc.keylens[i] = key.length;
		jt_nav_entry(&src, &kc.object, kc.count + i, &kc.values[i]);
	}
	result = change_keys(pointer, shape, &skel, &ref, &kc);
	if (result == NULL)
		return jsonb_concat(fcinfo);
	PG_RETURN_POINTER(result);
}

/* qsort() comparator of text pointers, in the order of jsonb's keys */
static int
text_key_cmp(const void *a, const void *b)
{
	const text *x = *(const text *const *) a;
	const text *y = *(const text *const *) b;

	return jt_key_cmp(VARDATA_ANY(x), VARSIZE_ANY_EXHDR(x),
					  VARDATA_ANY(y), VARSIZE_ANY_EXHDR(y));
}

/*
 * The keys a text[] names, NULLs left out (as the builtin does), into
 * kc: sorted as jsonb sorts keys, each once.  False if it names none.
 */
static bool
keys_to_remove(ArrayType *names, KeyedChange *kc)
{
	Datum	   *elems;
	bool	   *nulls;
	int			nelems;
	text	  **sorted;
	uint32		n = 0;

	deconstruct_array_builtin(names, TEXTOID, &elems, &nulls, &nelems);
	sorted = palloc(Max(nelems, 1) * sizeof(text *));
	for (int i = 0; i < nelems; i++)
		if (!nulls[i])
			sorted[n++] = DatumGetTextPP(elems[i]);
	qsort(sorted, n, sizeof(text *), text_key_cmp);
	kc->keys = palloc(Max(n, 1) * sizeof(char *));
	kc->keylens = palloc(Max(n, 1) * sizeof(uint32));
	kc->count = 0;
	for (uint32 i = 0; i < n; i++)
	{
		if (i > 0 && text_key_cmp(&sorted[i - 1], &sorted[i]) == 0)
			continue;
		kc->keys[kc->count] = VARDATA_ANY(sorted[i]);
		kc->keylens[kc->count] = VARSIZE_ANY_EXHDR(sorted[i]);
		kc->count++;
	}
	kc->vsrc = NULL;
	kc->values = NULL;
	return kc->count > 0;
}

/* jsonb - text[] */
Datum
jt_jsonb_delete_array(PG_FUNCTION_ARGS)
{
	JtSkeleton	skel;
	JtRef		ref;
	StoredShape shape;
	ArrayType  *names;
	KeyedChange kc;
	struct varlena *pointer = (struct varlena *) PG_GETARG_POINTER(0);
	struct varlena *result;

	shape = jt_open_stored(&pointer, &skel, &ref);
	if (shape == SHAPE_OTHER)
		return jsonb_delete_array(fcinfo);
	names = PG_GETARG_ARRAYTYPE_P(1);
	if (ARR_NDIM(names) > 1 || !keys_to_remove(names, &kc))
		return jsonb_delete_array(fcinfo);	/* which reports a bad array */
	result = change_keys(pointer, shape, &skel, &ref, &kc);
	if (result == NULL)
		return jsonb_delete_array(fcinfo);
	PG_RETURN_POINTER(result);
}
