/*-------------------------------------------------------------------------
 *
 * navigator.h
 *	  Lazy navigation of a stored jsonb value through a byte source.
 *
 * The navigator finds a key in an object, an element in an array, or a
 * string in an array, reading only the bytes it needs: a container's header
 * and JEntries, the candidate keys of a binary search, and the value found.
 * It asks a byte source for those bytes; the source decides how to produce
 * them (they are already in memory, or come from a streaming decoder fed by
 * TOAST chunks), so a source backed by a decoder only ever decompresses the
 * prefix of the document that holds them.
 *
 * Every length and offset read from the value is checked against the
 * bounds of its container before use; a violation is reported through the
 * source's corrupt() callback, which does not return.
 *
 * Like the decoders, this includes only c.h, so the fuzzers build it
 * without a server.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb/navigator.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef JSONB_TOASTER_NAVIGATOR_H
#define JSONB_TOASTER_NAVIGATOR_H

#include "jsonb/jsonb_format.h"
#include "support/compat.h"

typedef struct JtSource JtSource;

/*
 * A byte source: the jsonb payload (root container header onwards), size
 * bytes long, of which [0, avail) can be read at data.  fill() makes at
 * least [0, upto) readable (upto <= size) or raises an error; it may move
 * the data, so a pointer from jt_source_read() is good only until the next
 * read.  corrupt() reports a malformed value and does not return.
 */
struct JtSource
{
	const char *data;
	uint32		size;
	uint32		avail;
	void		(*fill) (JtSource *src, uint32 upto);
	void		(*corrupt) (JtSource *src, const char *detail);
	bool		refs_allowed;	/* a toaster skeleton: JT_JENTRY_REF is valid */
};

typedef enum JtNodeKind
{
	JT_NODE_STRING,
	JT_NODE_NUMERIC,
	JT_NODE_FALSE,
	JT_NODE_TRUE,
	JT_NODE_NULL,
	JT_NODE_CONTAINER,
	JT_NODE_REF,				/* skeletons only: a value stored elsewhere */
} JtNodeKind;

/* A value inside the document: where its bytes are, and what it is. */
typedef struct JtNode
{
	JtNodeKind	kind;
	uint32		offset;			/* first byte, alignment padding skipped */
	uint32		length;			/* number of bytes */
	uint32		header;			/* containers and references: the container
								 * header word of the value */
} JtNode;

/* Reading a container's entries in order, each in constant time. */
typedef struct JtEntryIter
{
	uint32		nentries;		/* count, or 2 * count for objects */
	uint32		next;			/* index of the next entry */
	uint64		entries;		/* position of the first JEntry */
	uint64		data;			/* start of the data area */
	uint64		end;			/* end of the container */
	uint64		start;			/* data offset of the next entry */
} JtEntryIter;

extern JT_NORETURN void jt_nav_corrupt(JtSource *src, const char *detail);

/* Bytes [offset, offset + length) of the source, checked and made readable. */
static inline const char *
jt_source_read(JtSource *src, uint64 offset, uint64 length)
{
	if (offset + length > src->size)
		jt_nav_corrupt(src, "a length or offset points past the end of the value");
	if (offset + length > src->avail)
		src->fill(src, (uint32) (offset + length));
	return src->data + offset;
}

extern void jt_nav_root(JtSource *src, JtNode *root);
extern bool jt_nav_object_get(JtSource *src, const JtNode *object,
							  const char *key, uint32 keylen, JtNode *value);
extern bool jt_nav_object_find(JtSource *src, const JtNode *object,
							   const char *key, uint32 keylen, uint32 *index);
extern bool jt_nav_array_get(JtSource *src, const JtNode *array,
							 uint32 index, JtNode *element);
extern bool jt_nav_array_has_string(JtSource *src, const JtNode *array,
									const char *str, uint32 len);
extern void jt_nav_entry(JtSource *src, const JtNode *container, uint32 i,
						 JtNode *entry);
extern void jt_nav_iter_begin(JtSource *src, const JtNode *container,
							  JtEntryIter *it);
extern bool jt_nav_entries_fill(JtSource *src, const JtNode *container);
extern void jt_nav_iter_seek(JtSource *src, JtEntryIter *it, uint32 i);
extern bool jt_nav_iter_next(JtSource *src, JtEntryIter *it, JtNode *entry);
extern bool jt_nav_iter_next_nested(JtSource *src, JtEntryIter *it,
									JtNode *entry);
extern bool jt_nav_iter_next_long(JtSource *src, JtEntryIter *it,
								  uint64 min_length, JtNode *entry);
extern void jt_nav_describe_all(JtSource *src, const JtNode *container,
								JtNode *entries);
extern uint32 jt_node_entry_type(const JtNode *node);

/* Compare two object keys in jsonb's order: shorter first, then bytewise. */
static inline int
jt_key_cmp(const char *a, uint32 alen, const char *b, uint32 blen)
{
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return memcmp(a, b, alen);
}

static inline uint32
jt_node_count(const JtNode *node)
{
	return node->header & JT_CONTAINER_COUNT_MASK;
}

static inline bool
jt_node_is_object(const JtNode *node)
{
	return (node->kind == JT_NODE_CONTAINER || node->kind == JT_NODE_REF) &&
		(node->header & JT_CONTAINER_OBJECT) != 0;
}

/* JEntries of a container: an object has one for each key and value. */
static inline uint32
jt_node_entry_count(const JtNode *node)
{
	return jt_node_is_object(node) ? 2 * jt_node_count(node) :
		jt_node_count(node);
}

/* The entry index of a container's first value: an object's keys come first. */
static inline uint32
jt_node_first_value_index(const JtNode *node)
{
	return jt_node_is_object(node) ? jt_node_count(node) : 0;
}

/* True for arrays, including the 1-element array holding a raw scalar. */
static inline bool
jt_node_is_array(const JtNode *node)
{
	return (node->kind == JT_NODE_CONTAINER || node->kind == JT_NODE_REF) &&
		(node->header & JT_CONTAINER_ARRAY) != 0;
}

static inline bool
jt_node_is_scalar_root(const JtNode *node)
{
	return (node->kind == JT_NODE_CONTAINER || node->kind == JT_NODE_REF) &&
		(node->header & JT_CONTAINER_SCALAR) != 0;
}

#endif							/* JSONB_TOASTER_NAVIGATOR_H */
