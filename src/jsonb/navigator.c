/*-------------------------------------------------------------------------
 *
 * navigator.c
 *	  Lazy navigation of a stored jsonb value through a byte source.
 *
 * Positions are 64-bit while they are being computed, so that no corrupt
 * length or offset can wrap around before it is compared with the bounds
 * of its container.  JEntries are read one at a time: finding element i of
 * a large array reads the JEntries from i back to the nearest one that
 * stores an end offset (at most 32 in anything PostgreSQL writes), not the
 * whole JEntry array.
 *
 * Offsets follow PostgreSQL's getJsonbOffset()/getJsonbLength(): an entry's
 * data starts where the previous entries' data ends, which is found by
 * adding lengths backwards until an entry that stores its end offset.
 * Numerics and containers start at the next 4-byte boundary of the data
 * area.  Object keys are compared as PostgreSQL orders them: shorter first,
 * then bytewise.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/jsonb/navigator.c
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "jsonb/navigator.h"

/* Where a container's parts are, as positions in the source. */
typedef struct ContainerLayout
{
	uint32		nentries;		/* JEntries: count, or 2 * count for objects */
	uint64		entries;		/* first JEntry */
	uint64		data;			/* start of the data area */
	uint64		end;			/* end of the container */
} ContainerLayout;

#define ALIGN4(x)	(((x) + 3) & ~((uint64) 3))

void
jt_nav_corrupt(JtSource *src, const char *detail)
{
	src->corrupt(src, detail);
	abort();					/* corrupt() does not return */
}

static inline uint32
read_uint32(JtSource *src, uint64 offset)
{
	uint32		v;

	memcpy(&v, jt_source_read(src, offset, sizeof(uint32)), sizeof(uint32));
	return v;
}

static void
check_container_header(JtSource *src, uint32 header)
{
	bool		is_object = (header & JT_CONTAINER_OBJECT) != 0;
	bool		is_array = (header & JT_CONTAINER_ARRAY) != 0;

	if (is_object == is_array)
		jt_nav_corrupt(src, "a container is neither an object nor an array");
	if ((header & JT_CONTAINER_SCALAR) &&
		(!is_array || (header & JT_CONTAINER_COUNT_MASK) != 1))
		jt_nav_corrupt(src, "a raw scalar container does not hold exactly one element");
}

static void
container_layout(JtSource *src, const JtNode *container, ContainerLayout *lay)
{
	uint32		count = jt_node_count(container);

	lay->nentries = jt_node_is_object(container) ? count * 2 : count;
	lay->entries = (uint64) container->offset + sizeof(uint32);
	lay->data = lay->entries + (uint64) lay->nentries * sizeof(uint32);
	lay->end = (uint64) container->offset + container->length;
	if (lay->data > lay->end)
		jt_nav_corrupt(src, "a container's JEntries run past its end");
}

static inline uint32
entry_at(JtSource *src, const ContainerLayout *lay, uint32 i)
{
	uint64		offset = lay->entries + (uint64) i * sizeof(uint32);
	uint32		v;

	Assert(i < lay->nentries);
	/* all the JEntries readable (a skeleton, a document in memory): no check */
	if (likely(lay->data <= src->avail))
	{
		memcpy(&v, src->data + offset, sizeof(uint32));
		return v;
	}
	return read_uint32(src, offset);
}

/*
 * Start of entry i's data, relative to the data area: the nearest stored
 * end offset before it, plus the lengths in between.  With check, that end
 * offset is also checked against the start of its own entry.  A walk or a
 * copy that begins at entry i reads no entry before it: an end offset that
 * fell back before the data of the entries it ends would have it take bytes
 * of those entries for entry i's, all within the container, so no later
 * bounds check would notice.
 */
static inline uint64
entry_start_from(JtSource *src, const ContainerLayout *lay, uint32 i,
				 bool check)
{
	uint64		start = 0;

	while (i > 0)
	{
		uint32		e = entry_at(src, lay, --i);

		start += e & JT_JENTRY_OFFLEN_MASK;
		if (e & JT_JENTRY_HAS_OFF)
		{
			if (check &&
				(e & JT_JENTRY_OFFLEN_MASK) < entry_start_from(src, lay, i, false))
				jt_nav_corrupt(src, "a JEntry's end offset precedes its start");
			break;
		}
	}
	return start;
}

static inline uint64
entry_start(JtSource *src, const ContainerLayout *lay, uint32 i)
{
	return entry_start_from(src, lay, i, false);
}

static uint64
checked_entry_start(JtSource *src, const ContainerLayout *lay, uint32 i)
{
	return entry_start_from(src, lay, i, true);
}

/* Length of entry i's data (padding included), checked against the bounds. */
static uint64
entry_length(JtSource *src, const ContainerLayout *lay, uint32 entry,
			 uint64 start)
{
	uint64		len = entry & JT_JENTRY_OFFLEN_MASK;

	if (entry & JT_JENTRY_HAS_OFF)
	{
		if (len < start)
			jt_nav_corrupt(src, "a JEntry's end offset precedes its start");
		len -= start;
	}
	if (lay->data + start + len > lay->end)
		jt_nav_corrupt(src, "a JEntry's data runs past the end of its container");
	return len;
}

/*
 * The last entry of a container ends where the container does: PostgreSQL
 * writes no bytes after it.  A read of the last entry can check this, and
 * so a stored length that came out short.
 */
static inline void
check_last_entry_end(JtSource *src, const ContainerLayout *lay, uint64 end)
{
	if (lay->data + end != lay->end)
		jt_nav_corrupt(src, "a container's last entry does not end where the container does");
}

/*
 * Describe an entry as a node, given its JEntry and the start of its data
 * (relative to the data area of the container).
 */
static pg_attribute_always_inline void
describe_entry(JtSource *src, uint64 data, uint32 e, uint64 start, uint64 len,
			   JtNode *node)
{
	uint64		pad = 0;

	node->header = 0;
	switch (e & JT_JENTRY_TYPE_MASK)
	{
		case JT_JENTRY_STRING:
			node->kind = JT_NODE_STRING;
			break;
		case JT_JENTRY_NUMERIC:
			node->kind = JT_NODE_NUMERIC;
			pad = ALIGN4(start) - start;
			break;
		case JT_JENTRY_FALSE:
			node->kind = JT_NODE_FALSE;
			break;
		case JT_JENTRY_TRUE:
			node->kind = JT_NODE_TRUE;
			break;
		case JT_JENTRY_NULL:
			node->kind = JT_NODE_NULL;
			break;
		case JT_JENTRY_CONTAINER:
			node->kind = JT_NODE_CONTAINER;
			pad = ALIGN4(start) - start;
			break;
		case JT_JENTRY_REF:
			if (!src->refs_allowed)
				jt_nav_corrupt(src, "a JEntry has an unknown type");
			node->kind = JT_NODE_REF;
			pad = ALIGN4(start) - start;
			break;
		default:
			jt_nav_corrupt(src, "a JEntry has an unknown type");
	}
	if (pad > len)
		jt_nav_corrupt(src, "a JEntry is shorter than its alignment padding");
	node->offset = (uint32) (data + start + pad);
	node->length = (uint32) (len - pad);

	if (node->kind == JT_NODE_CONTAINER)
	{
		if (node->length < sizeof(uint32))
			jt_nav_corrupt(src, "a nested container is shorter than its header");
		node->header = read_uint32(src, node->offset);
		check_container_header(src, node->header);
		if (node->header & JT_CONTAINER_SCALAR)
			jt_nav_corrupt(src, "a nested container is marked as a raw scalar");
	}
	else if (node->kind == JT_NODE_REF)
	{
		/* a reference starts with the header of the value it stands for */
		if (node->length < 2 * sizeof(uint32))
			jt_nav_corrupt(src, "a reference is shorter than its header");
		node->header = read_uint32(src, node->offset);
		check_container_header(src, node->header);
	}
}

/* Describe entry i of a container as a node. */
static void
entry_node(JtSource *src, const ContainerLayout *lay, uint32 i, JtNode *node)
{
	uint32		e = entry_at(src, lay, i);
	uint64		start = entry_start(src, lay, i);
	uint64		len = entry_length(src, lay, e, start);

	if (i == lay->nentries - 1)
		check_last_entry_end(src, lay, start + len);
	describe_entry(src, lay->data, e, start, len, node);
}

void
jt_nav_root(JtSource *src, JtNode *root)
{
	if (src->size < sizeof(uint32))
		jt_nav_corrupt(src, "the value is shorter than a container header");
	root->kind = JT_NODE_CONTAINER;
	root->offset = 0;
	root->length = src->size;
	root->header = read_uint32(src, 0);
	check_container_header(src, root->header);
}

/* Objects of at most this many keys are searched in order. */
#define SMALL_OBJECT_KEYS	8

/*
 * Binary search over the keys of an object, reading only the JEntries and
 * the keys it compares with.  Returns whether the key is there; *index is
 * its position, or, if want_place, where it would go.
 */
static inline bool
object_find(JtSource *src, const JtNode *object, const ContainerLayout *lay,
			const char *key, uint32 keylen, bool want_place, uint32 *index)
{
	uint32		low = 0;
	uint32		high = jt_node_count(object);

	/*
	 * A small object is scanned in order, each key's start the end of the
	 * one before: cheaper than finding where each probe of a binary search
	 * starts, which walks back to the nearest stored offset.
	 */
	if (high <= SMALL_OBJECT_KEYS)
	{
		uint64		start = 0;

		for (uint32 i = 0; i < high; i++)
		{
			uint32		e = entry_at(src, lay, i);
			uint64		len = entry_length(src, lay, e, start);
			int			diff;

			if (len != keylen)
				diff = len > keylen ? 1 : -1;
			else
			{
				const char *p = jt_source_read(src, lay->data + start, len);

				/*
				 * Keys of one object often share their start: a lookup passes
				 * over a key whose last byte differs without comparing the
				 * rest.  It may then scan on past where a missing key would
				 * go, which only a caller wanting that place minds.
				 */
				if (!want_place && len > 0 && p[len - 1] != key[len - 1])
					diff = -1;
				else
					diff = memcmp(p, key, keylen);
			}
			if (diff >= 0)
			{
				*index = i;
				return diff == 0;
			}
			start += len;
		}
		*index = high;
		return false;
	}

	while (low < high)
	{
		uint32		mid = low + (high - low) / 2;
		uint32		e = entry_at(src, lay, mid);
		uint64		start;
		uint64		len;
		int			diff;

		/*
		 * Keys sort shorter first: a key whose JEntry holds its length, and
		 * whose length differs, is passed over without finding where it
		 * starts.  Its length only steers the search and reads nothing, so it
		 * is checked against the container's data as a whole, not at its
		 * position: a key too long for where it starts, which the full check
		 * reports, may then just not be found.
		 */
		if (!(e & JT_JENTRY_HAS_OFF) && (e & JT_JENTRY_OFFLEN_MASK) != keylen)
		{
			len = e & JT_JENTRY_OFFLEN_MASK;
			if (lay->data + len > lay->end)
				jt_nav_corrupt(src, "a JEntry's data runs past the end of its container");
			diff = len > keylen ? 1 : -1;
		}
		else
		{
			start = entry_start(src, lay, mid);
			len = entry_length(src, lay, e, start);
			if (len == keylen)
				diff = memcmp(jt_source_read(src, lay->data + start, len), key, keylen);
			else
				diff = len > keylen ? 1 : -1;
		}

		if (diff == 0)
		{
			*index = mid;
			return true;
		}
		if (diff < 0)
			low = mid + 1;
		else
			high = mid;
	}
	*index = low;
	return false;
}

/* Look up a key in an object; describe its value. */
bool
jt_nav_object_get(JtSource *src, const JtNode *object,
				  const char *key, uint32 keylen, JtNode *value)
{
	ContainerLayout lay;
	uint32		index;

	if (object->kind != JT_NODE_CONTAINER)
		jt_nav_corrupt(src, "a reference was read as a container");
	Assert(jt_node_is_object(object));
	if (jt_node_count(object) == 0)
		return false;
	container_layout(src, object, &lay);
	if (!object_find(src, object, &lay, key, keylen, false, &index))
		return false;
	entry_node(src, &lay, jt_node_count(object) + index, value);
	return true;
}

/*
 * Where a key is, or would go, among the keys of an object (an index from
 * 0 to the count); true if it is there.
 */
bool
jt_nav_object_find(JtSource *src, const JtNode *object,
				   const char *key, uint32 keylen, uint32 *index)
{
	ContainerLayout lay;

	if (object->kind != JT_NODE_CONTAINER)
		jt_nav_corrupt(src, "a reference was read as a container");
	if (!jt_node_is_object(object))
		jt_nav_corrupt(src, "an array was read as an object");
	container_layout(src, object, &lay);
	return object_find(src, object, &lay, key, keylen, true, index);
}

bool
jt_nav_array_get(JtSource *src, const JtNode *array, uint32 index,
				 JtNode *element)
{
	ContainerLayout lay;

	if (array->kind != JT_NODE_CONTAINER)
		jt_nav_corrupt(src, "a reference was read as a container");
	Assert(jt_node_is_array(array));
	if (index >= jt_node_count(array))
		return false;
	container_layout(src, array, &lay);
	entry_node(src, &lay, index, element);
	return true;
}

/* Does the array hold this string as an element (as jsonb's ? operator)? */
bool
jt_nav_array_has_string(JtSource *src, const JtNode *array,
						const char *str, uint32 len)
{
	uint32		count = jt_node_count(array);
	ContainerLayout lay;
	uint64		start = 0;

	if (array->kind != JT_NODE_CONTAINER)
		jt_nav_corrupt(src, "a reference was read as a container");
	Assert(jt_node_is_array(array));
	if (count == 0)
		return false;
	container_layout(src, array, &lay);

	for (uint32 i = 0; i < count; i++)
	{
		uint32		e = entry_at(src, &lay, i);
		uint64		elen = entry_length(src, &lay, e, start);

		if ((e & JT_JENTRY_TYPE_MASK) == JT_JENTRY_STRING && elen == len &&
			memcmp(jt_source_read(src, lay.data + start, elen), str, len) == 0)
			return true;
		start += elen;
	}
	return false;
}

/* Entry i of a container: for objects, keys are 0..n-1, values n..2n-1. */
void
jt_nav_entry(JtSource *src, const JtNode *container, uint32 i, JtNode *entry)
{
	ContainerLayout lay;

	Assert(container->kind == JT_NODE_CONTAINER);
	container_layout(src, container, &lay);
	if (i >= lay.nentries)
		jt_nav_corrupt(src, "an entry index is past the end of its container");
	entry_node(src, &lay, i, entry);
}

void
jt_nav_iter_begin(JtSource *src, const JtNode *container, JtEntryIter *it)
{
	ContainerLayout lay;

	Assert(container->kind == JT_NODE_CONTAINER);
	container_layout(src, container, &lay);
	it->nentries = lay.nentries;
	it->next = 0;
	it->entries = lay.entries;
	it->data = lay.data;
	it->end = lay.end;
	it->start = 0;
}

/*
 * Position an iterator on entry i (at most the count of entries), finding
 * where its data starts from the nearest stored end offset before it,
 * checked (checked_entry_start()).
 */
void
jt_nav_iter_seek(JtSource *src, JtEntryIter *it, uint32 i)
{
	ContainerLayout lay;

	if (i > it->nentries)
		jt_nav_corrupt(src, "an entry index is past the end of its container");
	lay.nentries = it->nentries;
	lay.entries = it->entries;
	lay.data = it->data;
	lay.end = it->end;
	it->next = i;
	it->start = checked_entry_start(src, &lay, i);
	if (it->data + it->start > it->end)
		jt_nav_corrupt(src, "a JEntry's data runs past the end of its container");
}

/*
 * Do a container's entries end exactly where its data ends?  (Each entry is
 * checked against the bounds when read; this catches a last entry that
 * stops short.)
 */
bool
jt_nav_entries_fill(JtSource *src, const JtNode *container)
{
	JtEntryIter it;

	jt_nav_iter_begin(src, container, &it);
	jt_nav_iter_seek(src, &it, it.nentries);
	return it.data + it.start == it.end;
}

/*
 * The next entry at least min_length bytes long (its padding included), or,
 * with nested, the next container or reference; false after the last.  The
 * entries passed over are checked by their JEntries alone, not described:
 * against the bounds, and with nested also as describe_entry() checks a
 * scalar (a known type, a numeric no shorter than its padding), for walks
 * that look only for nested containers.  Inlined in the entry points
 * below: walks over every entry are the hot loop of reading and changing
 * parts.
 */
static pg_attribute_always_inline bool
iter_next(JtSource *src, JtEntryIter *it, uint64 min_length, bool nested,
		  JtNode *entry)
{
	ContainerLayout lay;

	lay.nentries = it->nentries;
	lay.entries = it->entries;
	lay.data = it->data;
	lay.end = it->end;
	while (it->next < it->nentries)
	{
		uint32		e = entry_at(src, &lay, it->next);
		uint32		type = e & JT_JENTRY_TYPE_MASK;
		uint64		start = it->start;
		uint64		len = entry_length(src, &lay, e, start);

		if (it->next == lay.nentries - 1)
			check_last_entry_end(src, &lay, start + len);
		it->start += len;
		it->next++;
		if (nested ? type == JT_JENTRY_CONTAINER || type == JT_JENTRY_REF :
			len >= min_length)
		{
			describe_entry(src, it->data, e, start, len, entry);
			return true;
		}
		if (nested && type > JT_JENTRY_NULL)
			jt_nav_corrupt(src, "a JEntry has an unknown type");
		if (nested && type == JT_JENTRY_NUMERIC && ALIGN4(start) - start > len)
			jt_nav_corrupt(src, "a JEntry is shorter than its alignment padding");
	}
	return false;
}

/* The next entry, or false after the last. */
bool
jt_nav_iter_next(JtSource *src, JtEntryIter *it, JtNode *entry)
{
	return iter_next(src, it, 0, false, entry);
}

/* The next container or reference, or false after the last. */
bool
jt_nav_iter_next_nested(JtSource *src, JtEntryIter *it, JtNode *entry)
{
	return iter_next(src, it, 0, true, entry);
}

/* The next entry at least min_length bytes long, as iter_next(). */
bool
jt_nav_iter_next_long(JtSource *src, JtEntryIter *it, uint64 min_length,
					  JtNode *entry)
{
	return iter_next(src, it, min_length, false, entry);
}

/*
 * Describe every entry of a container in order (for objects the keys, then
 * the values) into entries, which has room for jt_node_entry_count() of
 * them, each checked as jt_nav_iter_next() checks it: one loop, for the
 * callers that want them all.
 */
void
jt_nav_describe_all(JtSource *src, const JtNode *container, JtNode *entries)
{
	ContainerLayout lay;
	uint64		start = 0;

	Assert(container->kind == JT_NODE_CONTAINER);
	container_layout(src, container, &lay);
	for (uint32 i = 0; i < lay.nentries; i++)
	{
		uint32		e = entry_at(src, &lay, i);
		uint64		len = entry_length(src, &lay, e, start);

		if (i == lay.nentries - 1)
			check_last_entry_end(src, &lay, start + len);
		describe_entry(src, lay.data, e, start, len, &entries[i]);
		start += len;
	}
}

/* The JEntry type of a node's value. */
uint32
jt_node_entry_type(const JtNode *node)
{
	switch (node->kind)
	{
		case JT_NODE_STRING:
			return JT_JENTRY_STRING;
		case JT_NODE_NUMERIC:
			return JT_JENTRY_NUMERIC;
		case JT_NODE_FALSE:
			return JT_JENTRY_FALSE;
		case JT_NODE_TRUE:
			return JT_JENTRY_TRUE;
		case JT_NODE_NULL:
			return JT_JENTRY_NULL;
		case JT_NODE_CONTAINER:
			return JT_JENTRY_CONTAINER;
		case JT_NODE_REF:
			return JT_JENTRY_REF;
	}
	return JT_JENTRY_NULL;		/* not reached */
}
