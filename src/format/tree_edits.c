/*-------------------------------------------------------------------------
 *
 * tree_edits.c
 *	  Edits of a tree that lies outside the row (tree_edits.h): checked,
 *	  applied, and made from two versions of the tree.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/format/tree_edits.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/pg_list.h"

#include "format/tree_edits.h"

/*
 * Unchanged bytes between two changes that are fewer than an edit's header
 * go into one edit with them.
 */
#define JT_TREE_EDIT_GAP	((uint32) sizeof(JtTreeEdit))

/* A byte range of the tree. */
typedef struct TreeSpan
{
	uint32		start;
	uint32		end;			/* one past the last byte */
} TreeSpan;

/*
 * Check the edits of a pointer, len bytes, against the tree's size:
 * sorted, apart, each of at least one byte and inside the tree.
 */
void
jt_tree_edits_check(JtSource *src, const char *edits, uint32 len,
					uint32 tree_size)
{
	uint64		at = 0;
	uint64		done = 0;		/* where the last edit ended in the tree */

	while (at < len)
	{
		JtTreeEdit e;

		if (len - at < sizeof(e))
			jt_nav_corrupt(src, "an edit of the tree is cut short");
		memcpy(&e, edits + at, sizeof(e));
		at += sizeof(e);
		if (e.length == 0 || e.length > len - at ||
			e.offset < done ||
			(uint64) e.offset + e.length > tree_size)
			jt_nav_corrupt(src, "an edit of the tree lies outside it or out of order");
		done = (uint64) e.offset + e.length;
		at += e.length;
	}
}

/* Apply edits (len bytes, checked) to tree. */
void
jt_tree_edits_apply(const char *edits, uint32 len, char *tree)
{
	uint32		at = 0;

	while (at < len)
	{
		JtTreeEdit e;

		memcpy(&e, edits + at, sizeof(e));
		at += sizeof(e);
		memcpy(tree + e.offset, edits + at, e.length);
		at += e.length;
	}
}

/* The spans where two trees of size bytes differ, near ones joined. */
static List *
changed_spans(const char *a, const char *b, uint32 size)
{
	List	   *spans = NIL;
	TreeSpan   *last = NULL;

	for (uint32 i = 0; i < size; i++)
	{
		if (a[i] == b[i])
			continue;
		if (last != NULL && i - last->end < JT_TREE_EDIT_GAP)
			last->end = i + 1;
		else
		{
			last = palloc(sizeof(TreeSpan));
			last->start = i;
			last->end = i + 1;
			spans = lappend(spans, last);
		}
	}
	return spans;
}

/* The spans old edits (len bytes, checked) cover. */
static List *
edited_spans(const char *edits, uint32 len)
{
	List	   *spans = NIL;
	uint32		at = 0;

	while (at < len)
	{
		JtTreeEdit e;
		TreeSpan   *s = palloc(sizeof(TreeSpan));

		memcpy(&e, edits + at, sizeof(e));
		s->start = e.offset;
		s->end = e.offset + e.length;
		spans = lappend(spans, s);
		at += sizeof(e) + e.length;
	}
	return spans;
}

/* Append the edit that gives span its bytes of new_tree. */
static void
append_edit(StringInfo edits, const TreeSpan *span, const char *new_tree)
{
	JtTreeEdit	e = {span->start, span->end - span->start};

	appendBinaryStringInfo(edits, (const char *) &e, sizeof(e));
	appendBinaryStringInfo(edits, new_tree + span->start, e.length);
}

/*
 * The edits that make new_tree of the tree part an old pointer names, whose
 * own edits (old_len bytes) made old_tree of it: what changed from
 * old_tree to new_tree, and what the old edits changed, with new_tree's
 * bytes.  False if they would take more than max_len bytes.
 */
bool
jt_tree_edits_make(const char *old_tree, const char *new_tree,
				   uint32 tree_size, const char *old_edits, uint32 old_len,
				   uint32 max_len, StringInfo edits)
{
	List	   *changed = changed_spans(old_tree, new_tree, tree_size);
	List	   *edited = edited_spans(old_edits, old_len);
	ListCell   *c = list_head(changed);
	ListCell   *e = list_head(edited);
	TreeSpan	cur = {0, 0};
	bool		have = false;

	/* merge the two sorted lists, joining spans that touch or nearly do */
	while (c != NULL || e != NULL)
	{
		TreeSpan   *next;

		if (e == NULL ||
			(c != NULL && ((TreeSpan *) lfirst(c))->start <
			 ((TreeSpan *) lfirst(e))->start))
		{
			next = lfirst(c);
			c = lnext(changed, c);
		}
		else
		{
			next = lfirst(e);
			e = lnext(edited, e);
		}
		if (have && next->start <= cur.end + JT_TREE_EDIT_GAP)
		{
			cur.end = Max(cur.end, next->end);
			continue;
		}
		if (have)
			append_edit(edits, &cur, new_tree);
		if ((uint32) edits->len > max_len)
			return false;
		cur = *next;
		have = true;
	}
	if (have)
		append_edit(edits, &cur, new_tree);
	return (uint32) edits->len <= max_len;
}
